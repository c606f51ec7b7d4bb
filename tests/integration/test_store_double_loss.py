"""A Redis lost twice, each loss adopted: nothing acknowledged vanishes unreported, no
offset is given out twice, HW never goes back (issue 36, item 1).

A loss restores each partition to its row's floor, max(hw, reserved_to): every
acknowledged offset is below it, and the loss reported (the offsets up to it) is an
upper bound of what was acknowledged and is gone (issue 33).

The fence counter lives in the namespace Redis lost; the store's rows are written
only by a token at least theirs. An adopted (or new) namespace must carry on from the
store's highest token, or every row stays frozen at its last figure and the next loss
restores that stale figure.
"""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.db.models import Max

from cluster.adapters import hot_state
from cluster.models import Event, Partition
from cluster.services import topic_create
from cluster.services.replication import replication_tick
from cluster.services.waiting import LocalQueue
from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def tick() -> None:
    queue = LocalQueue()
    replication_tick(dispatch=queue)
    queue.drain()


def produce(*values: str) -> dict:
    out = StringIO()
    args = [a for v in values for a in ("--value", v)]
    call_command("produce", "keep", "--partition", "0", *args, "--acks", "all", "--json",
                 stdout=out)
    answer = json.loads(out.getvalue())
    assert answer["state"] == "acknowledged"
    return answer


def lose_redis_and_adopt() -> None:
    """What deleting var/redis/appendonly* and restarting does to the namespace."""
    hot_state.client().flushdb()
    call_command("store", "adopt-redis", stdout=StringIO())
    tick()


def store_hw() -> int:
    return Partition.objects.get(topic__name="keep", index=0).hw


def floor() -> int:
    """What a loss restores the partition to: the row's HW or its reservation."""
    row = Partition.objects.get(topic__name="keep", index=0)
    return max(row.hw, row.reserved_to)


def losses() -> list[dict]:
    """What each hot-state-lost event counted gone."""
    found = Event.objects.filter(operation="hot-state-lost").order_by("id")
    return [{k: e.params[k] for k in ("missing_records", "partitions")} for e in found]


def restored() -> list[int]:
    return [int(e.params["restored_hw"]["0"]) for e in
            Event.objects.filter(operation="hot-state-lost").order_by("id")]


@pytest.fixture
def keep(redis_url):
    register_spus(0, 1, 2, online=True)
    topic_create(name="keep", partitions=1, replication=3)
    tick()


def test_a_second_loss_after_an_adopt_reports_a_bound_of_what_was_acknowledged_since(keep):
    acked: list[int] = []
    for n in range(12):  # one use case each: the store's rows carry a dozen tokens or more
        acked.append(produce(f"a{n}")["base_offset"])
        tick()
    assert store_hw() == 12
    reserved = floor()
    lose_redis_and_adopt()
    # Every acknowledged offset is below the floor restored; the report bounds the loss.
    assert restored() == [reserved] and max(acked) < reserved
    assert losses() == [{"missing_records": reserved, "partitions": {"0": reserved}}]
    assert losses()[0]["missing_records"] >= len(acked)

    hws = [store_hw()]
    for n in range(5):
        acked.append(produce(f"b{n}")["base_offset"])
        tick()
        hws.append(store_hw())
    assert hws == [reserved + n for n in range(6)]  # the rows follow the adopted namespace
    second = floor()
    lose_redis_and_adopt()

    # Only what came after the first restore is counted again, at least the five acked.
    assert restored()[1] == second and max(acked) < second
    assert losses()[1:] == [{"missing_records": second - reserved,
                             "partitions": {"0": second - reserved}}]
    assert losses()[1]["missing_records"] >= 5
    assert store_hw() == second
    after = produce("c")["base_offset"]
    assert after == second and after not in acked  # no offset given out twice
    tick()
    assert store_hw() == second + 1


def test_a_loss_while_the_rows_trail_gives_no_acknowledged_offset_out_again(keep, settings):
    """The mirror writes a row's HW at most every interval: the floor is the reservation."""
    settings.REPLICATION_MIRROR_INTERVAL_S = 3600.0
    tick()  # the first whole unit writes its slice; none is due for an hour after
    acked = []
    for n in range(100):  # past RESERVE_MIN: the reservation grows before a commit
        acked.append(produce(f"a{n}")["base_offset"])
    tick()
    assert store_hw() < 100  # the row trails the hot state
    reserved = floor()
    lose_redis_and_adopt()
    assert max(acked) < restored()[0] == reserved
    assert losses()[0]["missing_records"] >= len(acked)
    assert produce("after")["base_offset"] == restored()[0]


def test_a_reidentified_store_writes_its_rows_at_once(keep):
    for n in range(8):
        produce(f"a{n}")
        tick()
    highest = Partition.objects.aggregate(m=Max("written_by"))["m"]
    reserved = floor()  # the new namespace is empty: the partition goes on from here
    call_command("store", "reidentify", "--force", stdout=StringIO())
    tick()
    produce("after")
    tick()
    row = Partition.objects.get(topic__name="keep", index=0)
    assert row.written_by > highest
    assert row.hw == reserved + 1


def test_a_redis_back_from_an_older_append_only_file_carries_the_fence_on(keep):
    """Its owner marker survived (no adopt is asked), its fence counter is older."""
    for n in range(8):
        produce(f"a{n}")
        tick()
    client = hot_state.client()
    client.set(hot_state.key("fence"), 1)
    meta = json.loads(client.get(hot_state.META))
    meta["checked"] = "an earlier Redis run"
    client.set(hot_state.META, json.dumps(meta))
    tick()
    produce("after")
    tick()
    assert store_hw() == 9


def test_each_loss_skips_at_most_a_block_past_the_floor_not_a_multiple_of_the_offsets(keep):
    """The set a loss restores is made anew in the unit that restores it, with no figure of
    its own from before. When that unit's process knew an older reservation of its row
    (another worker's, which read the row before the producers raised it), it raised the
    reservation by a block sized as if every offset up to the floor had just been produced
    (2 x LEO x the mirror's cycle): each loss multiplied the offsets (a hunt of the set
    cache campaign reached 8.5 million on a partition of a few hundred records)."""
    from cluster.engine.engine import using
    from cluster.engine.mirror import RESERVE_MIN
    from cluster.services.records import records_produce
    from tests.helpers import another_process

    other = another_process()
    with using(other):
        tick()  # it reads the row's reservation as it is now, and keeps it
    for _ in range(4):
        records_produce(topic="keep", partition=0, acks=1, count=60, dispatch=LocalQueue())
        tick()
    floors = [floor()]
    for _ in range(3):
        hot_state.client().flushdb()
        call_command("store", "adopt-redis", stdout=StringIO())
        for table in other.mirror.reserved.values():  # (what it read before the producers)
            table.update(dict.fromkeys(table, 0))
        with using(other):
            tick()  # the restore, by the process that knew the older reservation
        floors.append(floor())
    assert restored() == floors[:-1] and floors[0] >= 240
    # Nothing produced between the losses: each skips at most the largest block.
    assert all(0 <= b - a <= RESERVE_MIN * 15 // 8 for a, b in zip(floors, floors[1:])), floors
