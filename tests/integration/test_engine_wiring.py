"""One engine per process, built by the composition root (composition/bootstrap.py, issue 32):
what it runs is its constructor's arguments, and a test swaps one by building another."""
from __future__ import annotations

import pytest

from cluster.adapters import hot_state, metadata_log, shards
from cluster.adapters.lease import LeaseLost
from cluster.ports import bound_to_store
from cluster.engine.engine import current, using
from cluster.projections.network import NetworkView
from cluster.services import replication
from cluster.services.waiting import LocalQueue
from tests.helpers import register_spus
from composition import bootstrap


def test_the_engine_is_the_one_the_composition_root_built_with_the_apps_collaborators():
    from healing.metrics import families
    from healing.plans import ACTOR
    from healing.preemption import on_preempting
    from history import checkpoints, services
    from planner.execution import moves_in_flight
    from planner.executor import plan_executor_step
    from cluster.projections import store
    from planner.management.spu_drain import DrainAction

    engine = bootstrap.engine()
    assert engine is current()
    assert engine.store_rows is store.catch_up
    assert engine.tick_steps == (plan_executor_step,)
    assert [(name, type(hook)) for name, hook in engine.extra_entries.items()] == [
        ("history-hw", checkpoints.HwCheckpoints)]
    assert engine.trim_floor is services.trim_floor
    assert [type(p) for p in engine.projections.values()] == [NetworkView]
    assert [type(a) for a in engine.actions_of("spu")] == [DrainAction]
    assert engine.yielding_actors == {ACTOR} and engine.preempting == (on_preempting,)
    assert isinstance(engine.scheduler, bootstrap.CelerySchedulerOnFirstUse)
    assert engine.moves_in_flight == (moves_in_flight,)
    assert engine.metric_families == (families,)


def test_the_engine_is_read_only_a_changed_collaborator_is_another_engine():
    engine = current()
    with pytest.raises(AttributeError):
        engine.tick_steps = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        engine.extra_entries["mine"] = lambda *a: []  # type: ignore[index]
    other = engine.replaced(tick_steps=())
    assert other.tick_steps == () and engine.tick_steps != ()
    with using(other):
        assert current() is other
    assert current() is engine


@pytest.fixture
def cluster_ticked(redis_url, settings):
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 600
    register_spus(0, 1, online=True)
    replication.replication_tick(dispatch=LocalQueue())


@pytest.mark.django_db
def test_an_engines_tick_step_and_extra_entries_run_in_each_tick_and_defer_to_the_commit(
        cluster_ticked):
    seen: list[str] = []

    def step(hot, at):
        seen.append("step")
        hot.after_commit(lambda: seen.append("after the commit"))
        return []

    def entries(hot, after, at, writing):
        seen.append("entries")
        return [{"type": "wiring-test"}]

    with using(current().replaced(tick_steps=(step,), extra_entries={"test": entries})):
        with bound_to_store():
            head = metadata_log.head()
        replication.replication_tick(dispatch=LocalQueue())
    assert seen == ["step", "entries", "after the commit"]
    with bound_to_store():
        assert [e.data["type"] for e in metadata_log.read(head + 1)].count("wiring-test") == 1


@pytest.mark.django_db
def test_a_refused_commit_runs_none_of_what_a_step_left_for_after_it(cluster_ticked):
    ran: list[str] = []

    def step_then_lose_the_lease(hot, at):
        hot.after_commit(lambda: ran.append("after the commit"))
        for lock_key in map(hot_state.key, shards.every_lock()):  # another holder's now
            hot_state.client().set(lock_key, "another holder's token")
        return []

    with using(current().replaced(tick_steps=(step_then_lose_the_lease,))):
        with pytest.raises(LeaseLost):
            replication.replication_tick(dispatch=LocalQueue())
    assert ran == []


@pytest.mark.django_db
def test_a_projection_receives_the_commit_as_a_record_whose_entries_carry_the_logs_offsets(
        cluster_ticked):
    records = []

    class Recorder:
        def begin(self, hot):
            return None

        def committed(self, hot, mark, record):
            records.append(record)

    def entries(hot, after, at, writing):
        return [{"type": "wiring-test", "n": 1}, {"type": "wiring-test", "n": 2}]

    engine = current()
    with using(engine.replaced(projections={"recorder": Recorder()},
                               extra_entries={"test": entries})):
        replication.replication_tick(dispatch=LocalQueue())
    (record,) = records
    with bound_to_store():
        logged = metadata_log.read(record.entries[0].offset, len(record.entries))
    assert [(e.offset, e.data["type"]) for e in record.entries] == [
        (e.offset, e.data["type"]) for e in logged]
    assert [e.data.get("n") for e in record.entries][-2:] == [1, 2]
    with pytest.raises(AttributeError):
        record.saved = ()  # type: ignore[misc]


@pytest.mark.django_db
def test_a_ticks_meta_parts_are_kept_by_its_engine_and_another_engine_starts_with_none(
        cluster_ticked):
    from cluster.adapters.set_cache import SetCache

    mine = current().replaced(sets=SetCache())
    assert mine.sets.meta.texts == {}
    with using(mine):
        replication.replication_tick(dispatch=LocalQueue())
    with bound_to_store() as store:
        assert (store, "connections") in mine.sets.meta.texts
    assert current().sets.meta is not mine.sets.meta
