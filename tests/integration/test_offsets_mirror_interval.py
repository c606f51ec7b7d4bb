"""Offsets reach the rows at a bounded rate; readers of offsets read the hot state; the
rows' reservation stays above every offset given out (issue 33, engine/mirror.py)."""
from __future__ import annotations

import json
import time
from io import StringIO

import pytest
from django.core.management import call_command

from cluster.adapters import hot_state
from cluster.engine.engine import current as engine
from cluster.models import Partition
from cluster.services import topic_create
from cluster.services.outages import spu_offline
from cluster.services.replication import replication_resync_store, replication_tick
from cluster.services.waiting import LocalQueue
from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]
INTERVAL_S = 10.0


def tick(at: int) -> None:
    queue = LocalQueue()
    replication_tick(now=at, dispatch=queue)
    queue.drain()


def produce(*values: str, partition: int = 0) -> dict:
    out = StringIO()
    args = [a for v in values for a in ("--value", v)]
    call_command("produce", "t", "--partition", str(partition), *args, "--acks", "all",
                 "--json", stdout=out)
    return json.loads(out.getvalue())


def row(index: int = 0) -> Partition:
    return Partition.objects.get(topic__name="t", index=index)


def hot(index: int = 0):
    return hot_state.load().state.replica_sets[("t", index)]


@pytest.fixture
def t(redis_url, settings):
    """Topic t (2 partitions, replication 3), its first whole tick made at ``at``."""
    settings.REPLICATION_MIRROR_INTERVAL_S = INTERVAL_S
    register_spus(0, 1, 2, online=True)
    topic_create(name="t", partitions=2, replication=3)
    at = int(time.time() * 1000)
    tick(at)
    return at


def test_a_rows_offsets_are_written_at_most_once_an_interval(t):
    produce("a", "b", "c")
    tick(t + 1000)
    tick(t + 2000)
    assert hot().hw == 3
    assert (row().hw, row().leo) == (0, 0)  # the next slice is due at t + 10 s
    tick(t + int(INTERVAL_S * 1000))
    assert (row().hw, row().leo) == (3, 3)


def test_a_row_whose_status_moved_is_written_at_once_with_its_offsets(t):
    produce("a", "b")
    leader = hot().leader
    spu_offline(spu_id=leader, by="test")
    tick(t + 1000)
    stored, now = row(), hot()
    assert stored.leader == now.leader != leader
    assert (stored.hw, stored.leo) == (now.hw, now.leo) == (2, 2)


def test_a_row_whose_status_moved_but_not_its_offsets_is_not_written_again(t):
    """A failover moves thousands of statuses and, for most of them, no offset: the
    mirror leaves those rows' offsets as it last wrote them (the log's projection writes
    their status columns)."""
    mirror = engine().mirror
    follower = next(s for s in hot().replicas if s != hot().leader)
    rows = mirror.rows_written
    spu_offline(spu_id=follower, by="test")
    tick(t + 1000)
    assert follower not in row().lrs and follower not in row(1).lrs  # both moved
    assert mirror.rows_written == rows  # and neither's offsets: nothing written
    produce("a")
    spu_offline(spu_id=hot().leader, by="test")
    tick(t + 2000)
    assert mirror.rows_written == rows + 1  # partition 0's offsets moved with its status
    assert (row().hw, row().leo) == (hot().hw, hot().leo) == (1, 1)


def test_the_reservation_is_above_every_offset_given_out_after_each_unit(t):
    seen = []
    for n in range(150):  # more than two RESERVE_MIN blocks, a unit each
        produce(f"v{n}")
        seen.append((hot().leo, row().reserved_to))
    assert all(leo <= reserved for leo, reserved in seen)
    # Raised a block at a time, not at every record.
    assert 1 < len({reserved for _, reserved in seen}) < 10


def test_each_unit_counts_the_rows_it_wrote(t):
    mirror = engine().mirror
    rows, reservations = mirror.rows_written, mirror.reservations_written
    produce("a")
    assert mirror.reservations_written == reservations + 1  # LEO 1 passed reservation 0
    tick(t + 1000)
    assert mirror.rows_written == rows  # nothing moved, no slice due
    tick(t + int(INTERVAL_S * 1000))
    assert mirror.rows_written == rows + 1  # the produced row; the other never changed


def test_rows_that_only_trail_are_not_healed_as_drift(t):
    produce("a", "b", "c")
    tick(t + 1000)
    assert row().hw == 0 and hot().hw == 3
    assert replication_resync_store() == 0
    Partition.objects.filter(topic__name="t", index=1).update(hw=50, leo=50)  # ahead
    assert replication_resync_store() == 1


def test_the_partitions_api_reads_offsets_from_the_hot_state(t, viewer_client):
    produce("a", "b", "c", partition=1)
    tick(t + 1000)
    assert row(1).hw == 0
    rows = viewer_client.get("/api/partitions/?topic=t").json()["results"]
    got = {r["partition"]: (r["hw"], r["leo"], [s["leo"] for s in r["replica_status"]])
           for r in rows}
    assert got == {0: (0, 0, [0, 0, 0]), 1: (3, 3, [3, 3, 3])}


def test_the_partitions_api_shows_the_rows_when_redis_is_not_answering(t, viewer_client,
                                                                       settings):
    produce("a", partition=1)
    tick(t + int(INTERVAL_S * 1000))
    produce("b", "c", partition=1)
    assert (row(1).hw, hot(1).hw) == (1, 3)
    with socket_refusing() as url:
        settings.REDIS_URL = url
        answer = viewer_client.get("/api/partitions/?topic=t")
    assert answer.status_code == 200
    assert {r["partition"]: r["hw"] for r in answer.json()["results"]} == {0: 0, 1: 1}


def test_the_records_panel_starts_from_the_hot_states_hw(t, operator_client, settings):
    settings.CONSUME_MAX_RECORDS = 25  # read from the row's HW (0) the newest would be cut
    produce(*[f"v{n}" for n in range(30)])
    tick(t + 1000)
    assert row().hw == 0
    html = operator_client.get("/topics/t/?partition=0").content.decode()
    assert ">v29<" in html and ">v10<" in html and ">v9<" not in html


def socket_refusing():
    """A URL on a port bound and never listening: every connection is refused."""
    import contextlib
    import socket

    @contextlib.contextmanager
    def held():
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            yield f"redis://127.0.0.1:{sock.getsockname()[1]}/0"

    return held()
