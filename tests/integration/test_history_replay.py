"""History replay on the real engine (issue 21): every recorded moment of a scripted
outage comes back, from the nearest snapshot, exactly as `partition list --json` showed it."""
from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from cluster.adapters import metadata_log
from cluster.ports import bound_to_store
from history import checkpoints
from history.models import Snapshot
from history.selectors import Point, moment_at
from tests.helpers import refused, register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis, pytest.mark.timeout(120)]


def listing() -> list[dict]:
    return json.loads(run("partition", "list", "--json"))


def head() -> int:
    with bound_to_store():
        return metadata_log.head()


@pytest.fixture
def history_cluster(redis_url, settings):
    """Six SPUs in three racks, HW checkpointed by every unit of work that moves one."""
    settings.HISTORY_HW_INTERVAL_S = 0
    checkpoints.forget()
    for rack, ids in (("rack-a", (0, 1)), ("rack-b", (2, 3)), ("rack-c", (4, 5))):
        register_spus(*ids, rack=rack, online=True)
    run("topic", "create", "pay", "-p", "4", "-r", "3")
    run("topic", "create", "logs", "-p", "1", "-r", "3")
    run("produce", "pay", "--partition", "0", "--count", "5", "--acks", "all")
    run("produce", "logs", "--count", "3", "--acks", "all")


def test_history_at_every_recorded_moment_is_the_partition_list_taken_then(history_cluster):
    moments: list[tuple[str, int, str, list[dict]]] = []

    def record(name: str) -> None:
        moments.append((name, head(), datetime.now(UTC).isoformat(), listing()))

    record("topics created")
    run("rack", "offline", "rack-a")
    record("rack-a offline")
    run("rack", "online", "rack-a")
    record("rack-a back")
    run("history", "snapshot")
    run("leader", "elect", "--preferred")
    record("preferred election")
    (logs,) = [r for r in listing() if r["topic"] == "logs"]
    leader, others = logs["leader"], [s for s in logs["replicas"] if s != logs["leader"]]
    for spu in others:
        run("spu", "offline", str(spu))
    run("produce", "logs", "--count", "4", "--acks", "1")
    run("spu", "offline", str(leader))
    run("spu", "online", str(others[0]))
    record("leaderless, waiting for its last LRS member")
    run("leader", "elect", "--unclean", "--topic", "logs", "--partition", "0",
        "--spu", str(others[0]))
    record("unclean election")
    for spu in (leader, others[1]):
        run("spu", "online", str(spu))
    record("SPUs back")
    register_spus(6, 7, rack="rack-c", online=True)
    plan = json.loads(run("plan", "rebalance", "--json"))
    run("plan", "apply", str(plan["id"]), "--wait")
    record("plan applied")

    for name, offset, when, rows in moments:
        assert json.loads(run("history", "at", "--offset", str(offset), "--json")) == rows, name
        assert json.loads(run("history", "at", "--time", when, "--json")) == rows, name
    assert moments[1][3] != moments[0][3] != moments[-1][3]  # the moments differ

    # Replays start from the nearest snapshot, not offset 0.
    snap = Snapshot.objects.get()
    _, started = moment_at(Point(offset=moments[-1][1]))
    assert started == snap.offset > 0
    _, started = moment_at(Point(offset=moments[0][1]))
    assert started == 0  # before the snapshot: the log still holds everything from 0

    one_topic = json.loads(run("history", "at", "--offset", str(moments[1][1]), "--topic",
                               "pay", "--json"))
    assert one_topic == [r for r in moments[1][3] if r["topic"] == "pay"]

    diff = json.loads(run("history", "diff", "--from", str(moments[0][1]),
                          "--to", str(moments[1][1]), "--json"))
    moved = {(r["topic"], r["partition"]) for r in diff["partitions"] if "leader" in r["changed"]}
    before = {(r["topic"], r["partition"]): r["leader"] for r in moments[0][3]}
    after = {(r["topic"], r["partition"]): r["leader"] for r in moments[1][3]}
    assert moved == {k for k in before if before[k] != after[k]} and moved
    assert diff["counts"]["leader"] == len(moved)
    assert {r["rack"] for r in diff["racks"]} == {"rack-a", "rack-b", "rack-c"}

    assert "ISO 8601" in str(refused("history", "at", "--time", "yesterday"))
    assert "offset" in str(refused("history", "diff", "--from", "-3", "--to", "1"))


def test_history_draws_an_spu_in_the_rack_it_had_then(history_cluster):
    from cluster.services.replication import replication_tick
    from cluster.services.spus import spu_update
    from history.selectors import spu_states

    before = head()
    spu_update(spu_id=0, rack="rack-z")
    replication_tick()  # the engine's topology sync notes the new rack
    then, now = moment_at(Point(offset=before))[0], moment_at(Point(at_ms=2 ** 62))[0]
    assert then.racks[0] == "rack-a" and now.racks[0] == "rack-z"
    assert {r["spu"]: r["rack"] for r in spu_states(then)}[0] == "rack-a"
    assert {r["spu"]: r["rack"] for r in spu_states(now)}[0] == "rack-z"
