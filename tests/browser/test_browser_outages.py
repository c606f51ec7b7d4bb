"""An operator rehearses an outage in Chromium and watches the elections move the leaders."""
from __future__ import annotations

import re

import pytest

from tests.helpers import register_spus

pytestmark = pytest.mark.redis


@pytest.fixture
def replicated_topic(transactional_db, redis_url):
    from cluster.models import ClusterState
    from cluster.services import topic_create
    from cluster.services.waiting import wait_replicated

    # transactional_db flushes the row migration 0002 made; topic creation chains from it.
    ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
    for rack, ids in (("rack-a", (0, 1)), ("rack-b", (2, 3)), ("rack-c", (4, 5))):
        register_spus(*ids, rack=rack, online=True)
    topic_create(name="orders", partitions=6, replication=3, min_lrs=2)
    assert wait_replicated("orders")


def _leaders(page) -> list[str]:
    cells = page.locator("table.partitions tbody tr td:nth-child(2)").all_inner_texts()
    return [re.match(r"(SPU \d+|none)", c.strip()).group(1) for c in cells]


def test_taking_a_leader_offline_moves_its_partitions_elsewhere(new_page, operator,
                                                                replicated_topic, shoot):
    from cluster.models import Partition

    spu = Partition.objects.filter(leader__isnull=False).values_list("leader", flat=True)[0]
    page = new_page(operator)
    page.goto("/topics/orders/")
    assert f"SPU {spu}" in _leaders(page)

    page.goto("/spus/")
    row = page.locator(f'tr[data-spu="{spu}"]')
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    with page.expect_navigation():
        row.get_by_role("button", name=f"Take SPU {spu} offline").click()
    assert asked and asked[0].startswith(f"Take SPU {spu} offline?")
    message = page.locator(".messages li .message-text").inner_text()
    assert re.fullmatch(rf"SPU {spu} offline: \d+ partitions? elected a new leader, "
                        r"0 left Offline\.", message), message
    # Beside the result: the moment it happened and before / after (issue 21).
    moment = page.locator(".messages li a.moment-link").get_attribute("href")
    assert re.fullmatch(r"/history/\?at=\d+", moment), moment
    assert page.locator(".messages li a.diff-link").get_attribute("href").startswith(
        "/history/diff/?from=")
    assert row.locator(".badge").first.inner_text() == "Offline"
    assert row.get_by_role("button", name=f"Bring SPU {spu} online").is_visible()
    shoot(page, "outage-1280")

    page.goto("/topics/orders/")
    leaders = _leaders(page)
    assert len(leaders) == 6 and f"SPU {spu}" not in leaders and "none" not in leaders
