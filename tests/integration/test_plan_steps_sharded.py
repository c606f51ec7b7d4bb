"""A running plan on the sharded engine (REPLICATION_SHARDS > 1): its step runs under every
lease with only the sets it reads loaded, the shards step on in the same tick, and no
whole tick runs. A step that reaches for sets it did not name runs again with them loaded;
one that goes over every set takes the whole tick."""
from __future__ import annotations

import pytest

from cluster.adapters import hot_state, unloaded
from cluster.core import replication as core
from cluster.core.replication import Key
from cluster.engine.controllers import Topology
from cluster.engine.engine import current, using
from cluster.services import topic_create
from cluster.services.records import records_produce
from cluster.services.replication import (coordinate, replication_shard_tick,
                                          replication_tick)
from cluster.services.waiting import LocalQueue
from cluster.testing.invariants import InvariantChecker
from planner.drain import plan_drain
from planner.execution import plan_apply
from planner.models import PlanExecution
from tests.helpers import register_spus, sharded_over, watching_loads

pytestmark = [pytest.mark.django_db, pytest.mark.redis]
SHARDS = 4
T0 = 1_900_000_000_000
STEP_MS = 500


@pytest.fixture(params=["one-redis", "two-redis"])
def sharded(request, redis_url, settings, monkeypatch):
    sharded_over(request, settings, monkeypatch, SHARDS)  # 16 partitions over the 4 shards
    register_spus(0, 1, 2, 3, 4, online=True)
    topic_create(name="orders", partitions=16, replication=3)
    queue = LocalQueue()
    replication_tick(now=T0, dispatch=queue)
    queue.drain()
    for p in range(16):
        assert records_produce(topic="orders", partition=p, acks=1, count=4,
                               dispatch=queue).state == "acknowledged"
    queue.drain()


@pytest.fixture
def loads(monkeypatch) -> dict[str, list]:
    """The sets each unit of every lease loaded (by key), and the whole ticks asked for."""
    picked: list[set] = []

    def seen(hot):
        if len(hot.scope) == SHARDS + 1:  # every lease's: the cluster's and each shard's
            picked.append(set(hot.state.replica_sets))

    return {"picked": picked, "whole": watching_loads(monkeypatch, seen)}


def sharded_tick(now: int, checker: InvariantChecker):
    """The coordinator, then every shard's task if it hands them out; then the invariants."""
    queue = LocalQueue()
    done = coordinate(now=now, dispatch=queue)
    for shard, quotas in (done.quotas or {}).items():
        replication_shard_tick(shard, quotas=quotas, now=now, dispatch=queue)
    queue.drain()
    checker.check(hot_state.load().state)
    return done


def test_a_running_plan_steps_on_its_own_sets_while_the_shards_step_and_no_whole_tick(
        sharded, loads):
    checker = InvariantChecker()
    plan = plan_drain(spu_id=4, by="test")
    moves = {(m["topic"], m["partition"]): m["after"] for m in plan.moves}
    assert len(moves) >= 4, "the drain moves several partitions"
    plan_apply(plan_id=plan.pk, by="test")
    loads["picked"].clear()
    now, ran = T0, []
    while PlanExecution.objects.get().finished_at is None:
        now += STEP_MS
        assert now < T0 + 120 * STEP_MS, PlanExecution.objects.values().get()
        done = sharded_tick(now, checker)
        ran.append((done.ran, done.step_sets))
    # Every tick of the execution handed the shards their tasks, after a unit of the
    # plan's sets alone: no whole tick, and no set outside the plan loaded by any unit
    # of every lease.
    assert loads["whole"] == []
    assert all(r is Topology.QUIET for r, _ in ran)
    assert all(0 < n <= len(moves) for _, n in ran)
    assert loads["picked"] and all(keys <= set(moves) for keys in loads["picked"])
    e = PlanExecution.objects.get()
    assert (e.state, e.moves_done, e.moves_failed) == ("done", len(moves), 0)
    sets = hot_state.load().state.replica_sets
    assert {k: sets[k].replicas for k in moves} == moves
    assert all(4 not in rs.replicas for rs in sets.values())
    assert all(sets[k].leader == after[0] for k, after in moves.items())
    # Once it ended, the coordinator's tick is quiet again and loads no set.
    loads["picked"].clear()
    done = sharded_tick(now + STEP_MS, checker)
    assert (done.ran, done.step_sets, loads["picked"]) == (Topology.QUIET, 0, [])


def _step_reading(named: list[Key], read: list[Key], seen: list[dict]):
    """A step that names ``named``, reads ``read`` and starts a move of the last one."""
    def step(hot, at):
        hot.reads(iter(named))
        seen.append({k: hot.state.replica_sets.get(k) is not None for k in read})
        rs = hot.state.replica_sets[read[-1]]
        spare = next(s for s in hot.state.spus if s not in rs.replicas)
        return core.handle(hot.state, core.ReassignPartition(
            rs.topic, rs.partition, [*rs.replicas[:-1], spare], now_ms=at))
    return step


def test_a_step_reaching_for_a_set_it_did_not_name_runs_again_with_it_loaded(
        sharded, loads):
    checker = InvariantChecker()
    sharded_tick(T0 + STEP_MS, checker)
    seen: list[dict] = []
    step = _step_reading([("orders", 1)], [("orders", 1), ("orders", 9)], seen)
    loads["picked"].clear()
    with using(current().replaced(tick_steps=(step,))):
        done = coordinate(now=T0 + 2 * STEP_MS, dispatch=LocalQueue())
    assert (done.ran, done.step_sets) == (Topology.QUIET, 2)
    # Named: orders/1; then the step reached for orders/9 and ran again with both.
    assert loads["picked"] == [{("orders", 1)}, {("orders", 1), ("orders", 9)}]
    assert seen == [{("orders", 1): True, ("orders", 9): True}]
    assert hot_state.load().state.replica_sets[("orders", 9)].move is not None
    assert loads["whole"] == []


def test_a_step_reading_a_partition_that_does_not_exist_finds_none_and_commits(
        sharded, loads):
    seen: list[dict] = []
    step = _step_reading([("orders", 2), ("orders", 99), ("gone", 0)],
                         [("orders", 99), ("gone", 0), ("orders", 2)], seen)
    with using(current().replaced(tick_steps=(step,))):
        done = coordinate(now=T0 + STEP_MS, dispatch=LocalQueue())
    assert (done.ran, done.step_sets) == (Topology.QUIET, 1)
    assert seen == [{("orders", 99): False, ("gone", 0): False, ("orders", 2): True}]
    assert hot_state.load().state.replica_sets[("orders", 2)].move is not None
    assert loads["whole"] == []


def test_a_step_going_over_every_set_takes_the_whole_tick(sharded, loads):
    passes: list[int] = []

    def step(hot, at):
        hot.reads([("orders", 3)])
        passes.append(len(hot.state.replica_sets))
        return []

    with using(current().replaced(tick_steps=(step,))):
        done = coordinate(now=T0 + STEP_MS, dispatch=LocalQueue())
    # The step unit loaded orders/3, then the pass over every set asked for the whole tick,
    # which ran the step on every set.
    assert (done.ran, done.quotas) == (Topology.WHOLE, None)
    assert loads["whole"] == [1] and passes == [16]


def test_a_step_that_keeps_reaching_for_more_takes_the_whole_tick(sharded, loads):
    def step(hot, at):
        for p in range(16):  # one more set each time, never named
            hot.state.replica_sets.get(("orders", p))
        return []

    with using(current().replaced(tick_steps=(step,))):
        done = coordinate(now=T0 + STEP_MS, dispatch=LocalQueue())
    assert done.ran is Topology.WHOLE and loads["whole"] == [1]
    assert [len(keys) for keys in loads["picked"]][:3] == [1, 2, 3]


def test_the_quiet_tick_names_the_set_a_step_reads_and_refuses_a_pass_over_them():
    sets = unloaded.UnloadedSets()
    with pytest.raises(unloaded.NeedsSets) as named:
        sets.get(("orders", 3))
    assert named.value.keys == {("orders", 3)}
    with pytest.raises(unloaded.NeedsWholeState) as every:
        list(sets.values())
    assert not isinstance(every.value, unloaded.NeedsSets)
