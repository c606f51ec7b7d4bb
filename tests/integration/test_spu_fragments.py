"""The outage buttons every SPU row carries are rendered once per page and stamped with
each SPU's id (cluster/templatetags/stamps.py): each row must still name its own SPU."""
from __future__ import annotations

import re

import pytest

from cluster.templatetags.stamps import STAND_IN
from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db]


def offline_actions(page: str) -> list[str]:
    return re.findall(r'action="/spus/(\d+)/offline/', page)


@pytest.mark.parametrize("url", ["/", "/spus/"])
def test_each_spu_row_carries_buttons_for_its_own_spu(operator_client, url):
    register_spus(3, 7, 12, rack="r1", online=True)
    page = operator_client.get(url).content.decode()
    assert offline_actions(page) == ["3", "7", "12"]
    for spu in (3, 7, 12):
        assert f'aria-label="Kill SPU {spu}\'s loop"' in page
        assert f'action="/spus/{spu}/online/?next={url}"' in page
    assert str(STAND_IN) not in page


def test_a_page_address_holding_the_stand_in_keeps_it_and_each_spu_its_id(operator_client):
    register_spus(3, 7, online=True)
    page = operator_client.get(f"/spus/?note={STAND_IN}").content.decode()
    assert offline_actions(page) == ["3", "7"]
    assert f'action="/spus/7/kill/?next=/spus/%3Fnote%3D{STAND_IN}"' in page


def test_the_topic_outage_panel_offers_each_hosting_spu_its_own_forms(operator_client):
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "-p", "3", "-r", "2")
    page = operator_client.get("/topics/t/").content.decode()
    panel = page[page.index('class="card outage-panel"'):]
    assert offline_actions(panel) == ["0", "1", "2"]
    for spu in (0, 1, 2):
        assert f'data-api="/api/spus/{spu}/online/"' in panel
    assert str(STAND_IN) not in page
