"""The engine's SPU and topic controllers adopt operator intents from their log entries
(the offsets above the one adopted), reading no SPU or topic row on a tick with nothing
new; a full comparison with the rows is their periodic fallback (issue 32)."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cluster.adapters import hot_state, metadata_log, shards, unloaded
from cluster.adapters.lease import LeaseLost
from cluster.ports import bound_to_store
from cluster.engine.store_identity import locked_for_this_store
from cluster.engine.engine import current, using
from cluster.models import Spu
from cluster.services import spu_register, spu_update, topic_create
from cluster.services.outages import spu_offline
from cluster.services.records import topic_set_producer_rate
from cluster.services.replication import replication_coordinate, replication_tick
from cluster.services.waiting import LocalQueue
from tests.helpers import register_spus

# Committed transactions: a command's intent is appended as it is in production.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]
T0 = 10_000_000


def tick(now: int) -> None:
    queue = LocalQueue()
    replication_tick(now=now, dispatch=queue)
    queue.drain()


def full_reads(queries: list[dict]) -> list[str]:
    """The full comparison's reads: every SPU row, every provisioned topic row. Not the
    cluster view's loads (an SPU's group joined, the largest topics): a tick whose sets
    moved stages them for the live pages, which read those at once when the pages' window
    is free, by the wall clock (3 s after the last staging: a slow run's)."""
    sql = [q["sql"] for q in queries if " JOIN " not in q["sql"] and " LIMIT " not in q["sql"]]
    return [s for s in sql if 'FROM "cluster_spu"' in s and "WHERE" not in s.split(
        'FROM "cluster_spu"', 1)[1]] + [
        s for s in sql if 'FROM "cluster_topic" WHERE' in s and '"resolution" =' in s
        and '"name" IN' not in s]


def ticked(now: int) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        tick(now)
    return full_reads(queries.captured_queries)


def coordinated(now: int) -> tuple[object, list[str]]:
    """A sharded coordinator's tick: what it returned, and the full comparison's reads."""
    with CaptureQueriesContext(connection) as queries:
        work = replication_coordinate(now=now, dispatch=LocalQueue())
    return work, full_reads(queries.captured_queries)


def made_alone(name: str, partitions: int, replication: int) -> None:
    """A topic created, and made by the coordinator's next tick under every lease alone."""
    topic_create(name=name, partitions=partitions, replication=replication)
    assert replication_coordinate(now=T0 + 1000, dispatch=LocalQueue()) is None


def adopted() -> dict:
    return hot_state.load().adopted


def intents_head() -> int:
    with bound_to_store():
        return metadata_log.intents_head()


def start_cluster() -> int:
    register_spus(0, 1, 2, rack="r1", online=True)
    topic_create(name="orders", partitions=3, replication=3)
    assert ticked(T0)  # a fresh meta: the first tick compares every row
    return T0


@pytest.fixture
def cluster(redis_url, settings):
    settings.REPLICATION_TOPOLOGY_COMPARE_S = 60
    return start_cluster()


@pytest.fixture
def sharded(redis_url, settings, monkeypatch):
    settings.REPLICATION_TOPOLOGY_COMPARE_S = 60
    settings.REPLICATION_SHARDS = 2
    monkeypatch.setattr(shards, "BLOCK", 2)
    return start_cluster()


def test_a_tick_with_no_new_intent_reads_no_spu_or_topic_row(cluster):
    assert adopted() == {"offset": intents_head(), "compared": T0, "checked": None}
    assert ticked(T0 + 1000) == []
    assert adopted()["checked"] == hot_state.load().checked is not None
    assert ticked(T0 + 2000) == []


def test_an_spu_registered_is_adopted_from_its_entry_not_from_the_rows(cluster):
    spu_register(spu_id=7, rack="r9")
    # Written straight to the store, without an entry: not looked at until the comparison.
    Spu.objects.filter(pk=0).update(rack="moved-behind-the-engine")
    assert ticked(T0 + 1000) == []
    hot = hot_state.load()
    assert hot.state.spus[7] is False and hot.racks["7"] == "r9"
    assert hot.racks["0"] == "r1"
    assert hot.adopted["offset"] == intents_head()


def test_the_periodic_comparison_adopts_a_row_written_without_an_entry(cluster):
    Spu.objects.filter(pk=0).update(rack="moved-behind-the-engine")
    assert ticked(T0 + 59_000) == []
    assert hot_state.load().racks["0"] == "r1"
    assert ticked(T0 + 60_000)  # the comparison is due
    hot = hot_state.load()
    assert hot.racks["0"] == "moved-behind-the-engine"
    assert hot.adopted["compared"] == T0 + 60_000


def test_a_rack_change_is_adopted_from_its_entry(cluster):
    spu_update(spu_id=1, rack="r2")
    assert ticked(T0 + 1000) == []
    assert hot_state.load().racks["1"] == "r2"
    with bound_to_store():
        entries = [e.data for e in metadata_log.read_all(0)]
    assert {"spu": 1, "rack": "r2"}.items() <= [e for e in entries
                                               if e["type"] == "spu-rack"][-1].items()


def test_a_topic_created_is_replicated_from_its_entry_reading_only_its_own_rows(cluster):
    topic_create(name="late", partitions=2, replication=2)
    assert ticked(T0 + 1000) == []
    hot = hot_state.load()
    assert "late" in hot.topics and len(hot.topics["late"]["partitions"]) == 2
    assert {k for k in hot.state.replica_sets if k[0] == "late"} == {("late", 0), ("late", 1)}


def test_an_spu_taken_offline_is_adopted_from_its_entries(cluster):
    spu_offline(spu_id=2)
    assert ticked(T0 + 1000) == []
    hot = hot_state.load()
    assert hot.state.spus[2] is False
    assert all(rs.leader != 2 for rs in hot.state.replica_sets.values())


def test_a_refused_save_adopts_nothing_and_the_next_tick_folds_the_entry_again(cluster):
    before = adopted()
    spu_register(spu_id=8)
    stolen: list[str] = []

    def lose_the_lease(hot, at):
        assert 8 in hot.state.spus  # adopted in the step, then refused
        stolen.extend(map(hot_state.key, shards.every_lock()))
        for lock_key in stolen:
            hot_state.client().set(lock_key, "another holder's token")
        return []

    with using(current().replaced(tick_steps=(lose_the_lease,))):
        with pytest.raises(LeaseLost):
            tick(T0 + 1000)
    assert adopted() == before
    assert 8 not in hot_state.load().state.spus
    hot_state.client().delete(*stolen)  # the other holder is gone
    assert ticked(T0 + 2000) == []
    assert 8 in hot_state.load().state.spus
    assert adopted()["offset"] == intents_head() > before["offset"]


def _whole_ticks(monkeypatch) -> list[int]:
    """One 1 a whole tick the coordinator asked for (none is run)."""
    from cluster.services import replication

    whole: list[int] = []
    monkeypatch.setattr(replication, "replication_tick", lambda *_, **__: whole.append(1))
    return whole


def _counting_loads(monkeypatch) -> list[int]:
    loaded: list[int] = []
    load_selected = hot_state.load_selected

    def counted(*args, **kwargs):
        hot = load_selected(*args, **kwargs)
        if not isinstance(hot.state.replica_sets, unloaded.UnloadedSets):
            loaded.append(len(hot.state.replica_sets))
        return hot

    monkeypatch.setattr(hot_state, "load_selected", counted)
    return loaded


def test_a_sharded_coordinators_quiet_tick_reads_no_row_and_a_new_spu_loads_no_set(
        sharded, monkeypatch):
    whole = _whole_ticks(monkeypatch)
    work, reads = coordinated(T0 + 1000)
    assert work is not None
    assert reads == []
    # A rate and a rack need no replica set: the quiet tick adopts them itself.
    topic_set_producer_rate(name="orders", rate=6)
    spu_update(spu_id=1, rack="r2")
    assert replication_coordinate(now=T0 + 1500, dispatch=LocalQueue()) is not None
    hot = hot_state.load()
    assert hot.topics["orders"]["rate"] == 6 and hot.racks["1"] == "r2"
    assert hot.adopted["offset"] == intents_head()
    spu_register(spu_id=9)
    loaded = _counting_loads(monkeypatch)
    assert replication_coordinate(now=T0 + 2000, dispatch=LocalQueue()) is None
    # A new SPU holds no set: the unit of every lease loads none, and no whole tick runs.
    assert whole == [] and loaded == [0, 0]
    assert 9 in hot_state.load().state.spus and hot_state.load().racks["9"] == ""
    assert adopted()["offset"] == intents_head()
    from cluster.services import spu_unregister

    spu_unregister(spu_id=9)  # no set names it: forgotten, again with no set loaded
    loaded.clear()
    assert replication_coordinate(now=T0 + 2500, dispatch=LocalQueue()) is None
    assert whole == [] and loaded == [0, 0]
    assert 9 not in hot_state.load().state.spus and "9" not in hot_state.load().racks


def test_a_redis_restart_since_the_last_comparison_compares_every_row_again(cluster):
    with locked_for_this_store(None) as held:
        hot = hot_state.load()
        # As the meta an older Redis run saved reads: checked, and compared, under it.
        hot.checked = "a run before the restart"
        hot.adopted = {**hot.adopted, "checked": hot.checked}
        hot_state.save(hot, held)
    assert ticked(T0 + 1000) == []  # the recovery check notes the new run ...
    assert ticked(T0 + 2000)  # ... and the next tick compares every row under it
    assert ticked(T0 + 3000) == []


def test_a_sharded_coordinator_makes_a_topic_created_from_its_entry_and_no_other_set(
        sharded, monkeypatch):
    whole = _whole_ticks(monkeypatch)
    assert replication_coordinate(now=T0 + 1000, dispatch=LocalQueue()) is not None
    topic_create(name="late", partitions=3, replication=2)
    work, reads = coordinated(T0 + 1500)
    assert work is None
    assert whole == [] and reads == []
    hot = hot_state.load()
    assert sorted(p for t, p in hot.state.replica_sets if t == "late") == [0, 1, 2]
    assert hot.adopted["offset"] == intents_head()
    assert replication_coordinate(now=T0 + 2000, dispatch=LocalQueue()) is not None


def test_a_sharded_coordinator_drops_a_topic_deleted_from_its_entry_loading_no_set(
        sharded, monkeypatch):
    from cluster.services import topic_delete

    whole = _whole_ticks(monkeypatch)
    made_alone("late", 3, 2)
    assert replication_coordinate(now=T0 + 1500, dispatch=LocalQueue()) is not None
    topic_delete(name="late")
    loaded = _counting_loads(monkeypatch)
    work, reads = coordinated(T0 + 2000)
    assert work is None
    # The quiet unit, then the topics' unit of every lease: neither loaded a set.
    assert whole == [] and loaded == [0, 0] and reads == []
    hot = hot_state.load()
    assert {t for t, _ in hot.state.replica_sets} == {"orders"}
    assert "late" not in hot.topics and hot.adopted["offset"] == intents_head()
    assert replication_coordinate(now=T0 + 2500, dispatch=LocalQueue()) is not None


def test_a_topic_made_again_is_dropped_by_one_tick_and_made_by_the_next_loading_no_set(
        sharded, monkeypatch):
    """Both at once need every set loaded; one after the other, neither loads a set."""
    from cluster.services import topic_delete

    whole = _whole_ticks(monkeypatch)
    made_alone("late", 3, 2)
    topic_delete(name="late")
    topic_create(name="late", partitions=2, replication=3)
    loaded = _counting_loads(monkeypatch)
    assert coordinated(T0 + 2000) == (None, [])
    hot = hot_state.load()
    assert "late" not in hot.topics and {t for t, _ in hot.state.replica_sets} == {"orders"}
    assert hot.adopted["offset"] < intents_head()  # the creation is left to the next tick
    assert coordinated(T0 + 2500) == (None, [])
    assert whole == [] and loaded == [0, 0, 0, 0]
    hot = hot_state.load()
    assert hot.adopted["offset"] == intents_head()
    late = {p: rs.replicas for (t, p), rs in hot.state.replica_sets.items() if t == "late"}
    assert sorted(late) == [0, 1] and all(len(r) == 3 for r in late.values())
    assert replication_coordinate(now=T0 + 3000, dispatch=LocalQueue()) is not None


def test_a_topic_made_again_found_by_the_comparison_is_made_by_the_next_comparison(
        sharded, monkeypatch):
    """A comparison not due by time (the log began again under the adopted offset) that
    drops a topic made again compares again at the next tick, which makes it."""
    from cluster.services import topic_delete

    whole = _whole_ticks(monkeypatch)
    made_alone("late", 3, 2)
    topic_delete(name="late")
    topic_create(name="late", partitions=2, replication=3)
    with locked_for_this_store(None) as held:
        hot = hot_state.load()
        hot.adopted = {**hot.adopted, "offset": intents_head() + 100}
        hot_state.save(hot, held)
    work, reads = coordinated(T0 + 2000)
    assert work is None and reads  # compared: the rows name the topic made again
    assert "late" not in hot_state.load().topics
    work, reads = coordinated(T0 + 2500)
    assert work is None and reads and whole == []
    assert sorted(p for t, p in hot_state.load().state.replica_sets if t == "late") == [0, 1]


def test_a_sharded_coordinator_adopts_an_spu_offline_from_its_entry_on_its_sets_alone(
        sharded, monkeypatch):
    whole = _whole_ticks(monkeypatch)
    made_alone("single", 6, 1)
    holding = sorted(k for k, rs in hot_state.load().state.replica_sets.items()
                     if 2 in rs.replicas)
    assert 3 <= len(holding) < 9  # every set of orders, and some of single
    spu_offline(spu_id=2)
    loaded = _counting_loads(monkeypatch)
    work, reads = coordinated(T0 + 2000)
    assert work is None
    # The quiet unit, then the SPU's sets alone under every lease; no row read.
    assert whole == [] and loaded == [0, len(holding)]
    assert reads == []
    hot = hot_state.load()
    assert hot.state.spus[2] is False and hot.adopted["offset"] == intents_head()
    assert all(rs.leader != 2 for rs in hot.state.replica_sets.values() if len(rs.replicas) > 1)
    assert replication_coordinate(now=T0 + 2500, dispatch=LocalQueue()) is not None


def test_another_spu_change_logged_while_the_sets_load_takes_the_whole_tick(sharded,
                                                                            monkeypatch):
    """The unit found the sets of the SPUs the quiet tick named; an SPU whose change was
    logged since has sets it did not load, so it adopts nothing and the whole tick runs."""
    from cluster.services import replication

    whole_ticks: list[int] = []
    whole = replication.replication_tick

    def counted(*args, **kwargs):
        whole_ticks.append(1)
        return whole(*args, **kwargs)

    monkeypatch.setattr(replication, "replication_tick", counted)
    keys_holding = hot_state.keys_holding

    def meanwhile(topics, spus):
        if not whole_ticks:
            spu_offline(spu_id=1)  # an operator's intent: appended under no lease
        return keys_holding(topics, spus)

    monkeypatch.setattr(hot_state, "keys_holding", meanwhile)
    spu_offline(spu_id=2)
    assert replication_coordinate(now=T0 + 2000, dispatch=LocalQueue()) is None
    assert whole_ticks == [1]
    hot = hot_state.load()
    assert hot.state.spus[1] is False and hot.state.spus[2] is False
    assert hot.adopted["offset"] == intents_head()
    assert all(rs.leader not in (1, 2) for rs in hot.state.replica_sets.values())


def test_an_spu_unregistered_by_force_is_adopted_on_its_sets_alone_and_stays_named(
        sharded, monkeypatch):
    """Unregistered while it holds replicas (``--force``): the unit loads its sets alone,
    takes it offline there, and keeps it in the state, offline, since replica maps name it
    (as the whole tick's reconcile does)."""
    from cluster.services import spu_unregister

    whole = _whole_ticks(monkeypatch)
    made_alone("single", 6, 1)
    holding = [k for k, rs in hot_state.load().state.replica_sets.items() if 2 in rs.replicas]
    spu_unregister(spu_id=2, force=True)
    loaded = _counting_loads(monkeypatch)
    assert replication_coordinate(now=T0 + 2000, dispatch=LocalQueue()) is None
    assert whole == [] and loaded == [0, len(holding)]
    hot = hot_state.load()
    assert hot.state.spus[2] is False and "2" not in hot.racks
    assert all(rs.leader != 2 for rs in hot.state.replica_sets.values() if len(rs.replicas) > 1)
    assert hot.adopted["offset"] == intents_head()
    # Another SPU's change: the reconcile checks SPU 2 again (still named), so its sets are
    # loaded with SPU 1's, and it stays.
    sets = hot_state.load().state.replica_sets
    reached = [k for k, rs in sets.items() if 1 in rs.replicas or 2 in rs.replicas]
    assert len(reached) > len([k for k, rs in sets.items() if 1 in rs.replicas])
    spu_offline(spu_id=1)
    loaded.clear()
    assert replication_coordinate(now=T0 + 3000, dispatch=LocalQueue()) is None
    assert whole == [] and loaded == [0, len(reached)]
    hot = hot_state.load()
    assert hot.state.spus[1] is False and 2 in hot.state.spus
