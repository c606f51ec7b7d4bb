"""Issue 35.7 (d): "Rack online" is offered only for a rack with an SPU down."""
from __future__ import annotations

import re

import pytest

from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


@pytest.fixture(autouse=True)
def cluster(redis_url):
    register_spus(0, 1, rack="rack-a", online=True)
    register_spus(2, 3, rack="rack-b", online=True)


def _offered(html: str) -> set[str]:
    return set(re.findall(r'aria-label="Bring rack ([\w-]+) online">Rack online<', html))


def test_no_rack_online_button_while_every_rack_is_up(operator_client):
    for url in ("/", "/spus/"):
        html = operator_client.get(url).content.decode()
        assert _offered(html) == set(), url
        assert html.count(">Rack offline<") == 2


def test_a_rack_with_an_spu_down_is_offered_rack_online_and_only_it(operator_client):
    assert operator_client.post("/spus/2/offline/", {"next": "/"}).status_code == 302
    for url in ("/", "/spus/"):
        assert _offered(operator_client.get(url).content.decode()) == {"rack-b"}, url
    assert operator_client.post("/racks/rack-b/online/", {"next": "/"}).status_code == 302
    assert _offered(operator_client.get("/").content.decode()) == set()
