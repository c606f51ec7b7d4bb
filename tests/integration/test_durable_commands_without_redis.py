"""A command that cannot reach Redis changes nothing and exits with a one-line error."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from cluster.core.spus import SpuResolution
from cluster.models import Spu
from tests.helpers import register_spus
from webapp.redis_server import free_port

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def no_redis(settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"


@pytest.mark.parametrize("args", [["spu", "offline", "3"], ["spu", "kill", "3"],
                                  ["rack", "offline", "rack-a"],
                                  ["produce", "orders", "--count", "1"],
                                  ["consume", "orders"], ["partition", "list"]])
def test_it_exits_1_with_one_line_and_changes_nothing(no_redis, args):
    register_spus(3, rack="rack-a", online=True)
    with pytest.raises(CommandError) as raised:
        call_command(*args, stdout=StringIO(), stderr=StringIO())
    assert raised.value.returncode == 1
    assert "cannot reach Redis" in str(raised.value) and "\n" not in str(raised.value)
    assert Spu.objects.get(id=3).resolution == SpuResolution.ONLINE.value
