"""SPU loops split into shards (REPLICATION_SHARDS > 1), stepped in-process: who holds which
lease, what each task loads and saves, and that the sharded engine replicates as one tick does."""
from __future__ import annotations

import time

import pytest

from cluster.adapters import hot_state, lease, shards, unloaded
from cluster.adapters.lease import CLUSTER_LOCK, LeaseLost
from cluster.ports import bound_to_store
from cluster.services.waiting import LocalQueue
from cluster.engine.store_identity import locked_for_this_store
from cluster.core.replication.compaction import COMPACTED
from cluster.testing.invariants import InvariantChecker
from cluster.models import Partition
from cluster.services import topic_create
from cluster.services.outages import spu_offline, spu_online
from cluster.services.records import records_produce, topic_set_producer_rate
from cluster.services.replication import (replication_shard_tick,
                                          replication_tick)
from tests import helpers
from tests.helpers import register_spus, sharded_over, watching_loads

pytestmark = [pytest.mark.django_db, pytest.mark.redis]
SHARDS = 4


@pytest.fixture(params=["one-redis", "two-redis"])
def sharded(request, redis_url, settings, monkeypatch):
    # Shards take whole live blocks (200 partitions); blocks of 4 spread 16 partitions.
    sharded_over(request, settings, monkeypatch, SHARDS)
    CHECKER[:] = [InvariantChecker()]
    register_spus(0, 1, 2, 3, online=True)
    topic_create(name="orders", partitions=16, replication=3)
    whole_tick()


def whole_tick(now: int | None = None) -> None:
    queue = LocalQueue()
    replication_tick(now=now, dispatch=queue)
    queue.drain()


CHECKER: list[InvariantChecker] = []


def sharded_tick(now: int | None = None) -> dict[int, dict] | None:
    """The coordinator, then every shard's task, checked by this test's durability checker
    (it remembers HW and commits across ticks)."""
    return helpers.sharded_tick(CHECKER[-1], now)


def produce(partition: int, count: int = 3) -> None:
    queue = LocalQueue()
    outcome = records_produce(topic="orders", partition=partition, acks=1, count=count,
                              dispatch=queue)
    queue.drain()
    assert outcome.state == "acknowledged", outcome


def record_ids() -> list[int]:
    hot = hot_state.load()
    return [i for rs in hot.state.replica_sets.values()
            for i in rs.replica[rs.leader].log if i != COMPACTED]


def test_every_partition_belongs_to_exactly_one_shard_and_every_shard_gets_some(sharded):
    topics = hot_state.load().topics
    parts = [shards.keys_of_shard(topics, s, SHARDS) for s in range(SHARDS)]
    assert sorted(k for part in parts for k in part) == [("orders", p) for p in range(16)]
    assert [len(part) for part in parts] == [4] * SHARDS
    assert all(shards.shard_of(k, SHARDS) == s for s, part in enumerate(parts) for k in part)


def test_a_live_block_stays_on_one_shard_and_the_next_block_takes_the_next_shard(redis_url):
    block = shards.BLOCK
    first = shards.shard_of(("big", 0), SHARDS)
    assert {shards.shard_of(("big", p), SHARDS) for p in range(block)} == {first}
    assert shards.shard_of(("big", block), SHARDS) == (first + 1) % SHARDS
    assert shards.shard_of(("big", 4 * block + 7), SHARDS) == first


def test_a_quiet_tick_fans_out_and_the_shards_replicate_every_record(sharded):
    for p in range(16):
        produce(p)
    work = sharded_tick()
    assert work is not None and sorted(work) == list(range(SHARDS))
    sharded_tick()
    hot = hot_state.load()
    assert {k: (rs.hw, rs.leo) for k, rs in hot.state.replica_sets.items()} == {
        ("orders", p): (3, 3) for p in range(16)}


def test_a_shard_task_saves_only_its_own_sets_and_never_the_meta(sharded):
    for p in range(16):
        produce(p)
    before_sets = hot_state.client().hgetall(hot_state.sets_key("orders"))
    before_meta = hot_state.client().get(hot_state.META)
    replication_shard_tick(0, dispatch=LocalQueue())
    after_sets = hot_state.client().hgetall(hot_state.sets_key("orders"))
    mine = {str(p) for _, p in shards.keys_of_shard(hot_state.load().topics, 0, SHARDS)}
    changed = {p.decode() for p in after_sets if after_sets[p] != before_sets[p]}
    assert changed and changed <= mine
    assert hot_state.client().get(hot_state.META) == before_meta


def test_a_shard_task_waits_while_a_whole_state_holder_works(sharded):
    with locked_for_this_store(1):
        with pytest.raises(TimeoutError):
            replication_shard_tick(1, dispatch=LocalQueue(), lock_timeout_s=0.2)


def test_the_whole_tick_waits_for_a_busy_shard_but_other_shards_run(sharded):
    with bound_to_store(), lease.held(1, shards.lock_name(2)):
        with pytest.raises(TimeoutError):
            whole_tick_with_timeout(0.2)
        report = replication_shard_tick(3, dispatch=LocalQueue(), lock_timeout_s=0.2)
    assert report["sets"] > 0


def whole_tick_with_timeout(seconds: float) -> None:
    replication_tick(dispatch=LocalQueue(), lock_timeout_s=seconds)


@pytest.fixture
def loads(monkeypatch):
    """How many sets each unit loaded, and whether a whole tick ran."""
    sets: list[int] = []

    def seen(hot):
        if not isinstance(hot.state.replica_sets, unloaded.UnloadedSets):
            sets.append(len(hot.state.replica_sets))

    return {"sets": sets, "whole": watching_loads(monkeypatch, seen)}


def test_a_topic_added_is_made_alone_under_every_lease_and_the_shards_step_it(sharded,
                                                                              loads):
    assert sharded_tick() is not None
    topic_create(name="late", partitions=8, replication=2)
    loads["sets"].clear()
    assert sharded_tick() is None  # no shard task that tick: the topic's unit ran
    # The coordinator's quiet unit, then the topic's: neither loaded a set.
    assert loads == {"sets": [0, 0], "whole": []}
    hot = hot_state.load()
    late = {k: rs for k, rs in hot.state.replica_sets.items() if k[0] == "late"}
    assert len(late) == 8
    assert all(rs.leader == rs.replicas[0] and rs.resolution.value == "Online"
               for rs in late.values())
    assert {k for k in hot.state.replica_sets if k[0] == "orders"} == {
        ("orders", p) for p in range(16)}
    assert sharded_tick() is not None  # every shard steps its share of both topics
    queue = LocalQueue()
    for p in range(8):
        assert records_produce(topic="late", partition=p, acks=1, count=2,
                               dispatch=queue).state == "acknowledged"
    queue.drain()
    sharded_tick()
    sharded_tick()
    hot = hot_state.load()
    assert {rs.hw for k, rs in hot.state.replica_sets.items() if k[0] == "late"} == {2}
    assert not loads["whole"]


def test_a_topic_added_with_an_spu_change_is_adopted_alone_and_one_made_again_too(
        sharded, loads):
    from cluster.services import topic_delete

    sharded_tick()
    topic_create(name="late", partitions=4, replication=2)
    spu_offline(spu_id=3)  # the SPU's sets change, and no other
    holding = sorted(k for k, rs in hot_state.load().state.replica_sets.items()
                     if 3 in rs.replicas)
    loads["sets"].clear()
    assert sharded_tick() is None and not loads["whole"]
    assert loads["sets"] == [0, len(holding)]  # the quiet unit, then the SPU's sets alone
    hot = hot_state.load()
    assert "late" in hot_state.replicated_topics()
    # The new topic's sets were made after the SPU went offline: none is led there.
    assert all(rs.leader != 3 for rs in hot.state.replica_sets.values())
    topic_delete(name="late")
    topic_create(name="late", partitions=2, replication=2)
    # Dropped by one unit, made by the next, each with no other set loaded (both at once
    # took the whole tick).
    assert sharded_tick() is None and not loads["whole"]
    assert "late" not in hot_state.replicated_topics()
    assert sharded_tick() is None and not loads["whole"]
    hot = hot_state.load()
    late = {p: rs.replicas for (t, p), rs in hot.state.replica_sets.items() if t == "late"}
    assert late == {p: list(r) for p, r in Partition.objects.filter(
        topic__name="late").values_list("index", "replicas")}
    assert sorted(late) == [0, 1]
    assert sharded_tick() is not None


def _replica_sets(state) -> dict:
    from cluster.core.replication import cluster_to_dict

    return {(d["topic"], d["partition"]): d for d in cluster_to_dict(state)["replica_sets"]}


@pytest.mark.parametrize("spu", [0, 2])
def test_an_spu_changing_status_loads_only_its_sets_and_leaves_them_as_a_whole_tick_would(
        sharded, loads, spu):
    """Offline, then back: the unit under every lease loads exactly the sets with a replica
    on the SPU, runs no whole tick, and leaves every set as the core's reaction over the
    whole state does (the SPU's reaction and the elections, at the same time)."""
    from cluster.core import replication as core

    for p in range(16):
        produce(p)
    sharded_tick()
    sharded_tick()
    for change, event in ((spu_offline, core.SpuOffline), (spu_online, core.SpuOnline)):
        at = int(time.time() * 1000)
        expected = hot_state.load().state
        holding = set(expected.keys_of(spu))
        core.handle(expected, event(spu))
        core.run_elections(expected, at, set())
        change(spu_id=spu)
        loads["sets"].clear()
        assert sharded_tick(now=at) is None
        assert loads == {"sets": [0, len(holding)], "whole": []}
        after = hot_state.load().state
        assert after.spus == expected.spus and after.connections == expected.connections
        assert _replica_sets(after) == _replica_sets(expected)
        for _ in range(3):
            assert sharded_tick() is not None
    hot = hot_state.load()
    assert all(spu in rs.lrs for rs in hot.state.replica_sets.values() if spu in rs.replicas)
    assert {rs.hw for rs in hot.state.replica_sets.values()} == {3}


def _statuses(state) -> dict:
    """Each set's status less its offsets: replicas, leader, LRS, epoch, resolution, move."""
    return {k: (rs.replicas, rs.leader, sorted(rs.lrs), rs.epoch, rs.resolution, rs.move)
            for k, rs in state.replica_sets.items()}


def test_an_spu_offline_adopted_alone_holds_through_busy_shards_saving_steady_sets(
        sharded, settings):
    """With producers on every partition the shards save their steady sets as figures in
    their blocks' rows. The unit of every lease that takes SPU 0 offline writes its sets'
    fields; the shards' next steps, busy, must read those and save them on, not their own
    images of the sets (test_status_rows.py has the case where the figures stay equal)."""
    from cluster.adapters import status_rows

    settings.REPLICATION_SIMULATED_PRODUCERS = True
    topic_set_producer_rate(name="orders", rate=16)
    at = 7_000_000
    for _ in range(4):
        at += 1_000
        sharded_tick(now=at)
    with bound_to_store():
        assert hot_state.client().hlen(status_rows.rows_key("orders")) > 0, "sets in rows"
    spu_offline(spu_id=0)
    at += 1_000
    assert sharded_tick(now=at) is None  # the SPU's sets alone, under every lease
    adopted = _statuses(hot_state.load().state)
    assert all(leader != 0 and 0 not in lrs for _, leader, lrs, _, _, _ in adopted.values())
    for _ in range(3):
        at += 1_000
        assert sharded_tick(now=at) is not None
        # Nothing goes back to what the sets were before the unit: SPU 0 neither leads
        # nor is in an LRS, and the leaders and epochs are the unit's.
        assert _statuses(hot_state.load().state) == adopted


def test_an_spu_outage_and_return_elect_leaders_and_keep_every_record(sharded):
    for p in range(16):
        produce(p)
    sharded_tick()
    spu_offline(spu_id=1)
    assert sharded_tick() is None  # the SPU's sets change cluster-wide
    for _ in range(3):
        sharded_tick()
    hot = hot_state.load()
    assert all(rs.leader not in (None, 1) for rs in hot.state.replica_sets.values())
    for p in range(16):
        produce(p)
    spu_online(spu_id=1)
    for _ in range(4):
        sharded_tick()
    hot = hot_state.load()
    assert {rs.hw for rs in hot.state.replica_sets.values()} == {6}
    assert all(1 in rs.lrs for rs in hot.state.replica_sets.values() if 1 in rs.replicas)


def test_simulated_producers_split_over_shards_add_up_to_the_rate(sharded, settings):
    settings.REPLICATION_SIMULATED_PRODUCERS = True
    topic_set_producer_rate(name="orders", rate=40)
    sharded_tick(now=5_000_000)
    sharded_tick(now=5_001_000)
    leos = [rs.leo for rs in hot_state.load().state.replica_sets.values()]
    assert sum(leos) == 40 and max(leos) - min(leos) <= 1


def test_record_ids_stay_unique_across_shards_and_after_going_back_to_one_shard(sharded,
                                                                                settings):
    settings.REPLICATION_SIMULATED_PRODUCERS = True
    topic_set_producer_rate(name="orders", rate=64)
    for second in range(3):
        sharded_tick(now=6_000_000 + 1000 * second)
    produce(0)
    settings.REPLICATION_SHARDS = 1
    produce(1)
    ids = record_ids()
    assert len(ids) == 64 * 2 + 6 and len(set(ids)) == len(ids)


def test_a_shard_holder_whose_lease_expired_has_its_save_refused(sharded, settings):
    settings.REPLICATION_LOCK_LEASE_S = 0.2
    produce(next(p for _, p in shards.keys_of_shard(hot_state.load().topics, 0, SHARDS)))
    stale = hot_state.load_selected(lambda t: shards.keys_of_shard(t, 0, SHARDS))
    with bound_to_store(), lease.held(1, shards.lock_name(0)) as held:
        held._stop.set()  # a stopped process renews nothing
        time.sleep(0.5)
        replication_shard_tick(0, dispatch=LocalQueue())  # another holder took the shard
        after = hot_state.client().hgetall(hot_state.sets_key("orders"))
        for rs in stale.state.replica_sets.values():
            rs.epoch += 100  # a change the stale holder would save
        with pytest.raises(LeaseLost):
            hot_state.save_sets(stale, lease.Held((held,)))
    assert hot_state.client().hgetall(hot_state.sets_key("orders")) == after


def test_one_shard_takes_only_the_cluster_lease_as_before(redis_url, settings):
    settings.REPLICATION_SHARDS = 1
    assert shards.every_lock() == [CLUSTER_LOCK]


def test_a_killed_spu_loop_is_dropped_by_the_coordinator_once_its_heartbeat_lapses(sharded,
                                                                                   settings,
                                                                                   loads):
    """On its sets alone: the unit of every lease loads the sets with a replica on the
    silent SPU, and no whole tick runs."""
    from cluster.core.spus import SpuResolution
    from cluster.models import Spu
    from cluster.services.outages import spu_kill

    sharded_tick(now=7_000_000)
    spu_kill(spu_id=2)
    assert sharded_tick(now=7_001_000) is not None  # silent for less than the timeout
    timeout_ms = int(settings.REPLICATION_HEARTBEAT_TIMEOUT_S * 1000)
    holding = [k for k, rs in hot_state.load().state.replica_sets.items() if 2 in rs.replicas]
    loads["sets"].clear()
    assert sharded_tick(now=7_001_000 + timeout_ms + 1000) is None
    assert loads == {"sets": [0, len(holding)], "whole": []}
    assert Spu.objects.get(pk=2).resolution == SpuResolution.OFFLINE.value
    hot = hot_state.load()
    assert hot.state.spus[2] is False
    assert all(rs.leader != 2 for rs in hot.state.replica_sets.values())


def test_reconciliation_rewrites_drifted_rows_one_shard_at_a_time(sharded, settings):
    from cluster.models import Partition
    from cluster.services.replication import replication_resync_store

    for p in range(16):
        produce(p)
    sharded_tick()
    truth = list(Partition.objects.order_by("index").values_list("leader", "lrs", "hw", "leo"))
    assert replication_resync_store() == 0
    Partition.objects.filter(index__in=[0, 5, 15]).update(leader=None, lrs=[], hw=0, leo=0)
    settings.REPLICATION_LOCK_TIMEOUT_S = 0.2
    with bound_to_store(), lease.held(1, shards.lock_name(0)):
        with pytest.raises(TimeoutError):  # it waits for the shard's lease, not the others'
            replication_resync_store()
    assert replication_resync_store() == 3
    assert list(Partition.objects.order_by("index").values_list(
        "leader", "lrs", "hw", "leo")) == truth


def test_a_unit_of_no_set_logs_its_entries_under_the_cluster_lease(sharded):
    """A healing run's events (healing/journal.py) load no set: sharded, they took no
    lease at all and the save was refused, so the events were lost."""
    from cluster import ports

    head = ports.log_head()
    with ports.unit(keys=[]) as u:
        u.log({"type": "event", "actor": "test", "object_type": "spu", "object_name": "1",
               "operation": "note", "params": {}, "result": ""})
    assert ports.log_head() == head + 1
    assert ports.read_log(head + 1)[0].data["operation"] == "note"


def test_a_healing_run_that_finds_an_spu_down_logs_its_events_when_sharded(sharded):
    from cluster.models import Event
    from healing.services import healing_check

    spu_offline(spu_id=0, by="test")
    sharded_tick()
    sharded_tick()
    assert healing_check(now_ms=int(time.time() * 1000))["anomalies"] == 1
    assert Event.objects.filter(object_type="anomaly").exists()


def hot_keys_naming(topic: str) -> list[str]:
    """Every key of every hot-state server whose name holds ``topic`` between separators."""
    from cluster.adapters import hot_servers

    found = []
    for server in hot_servers.servers():
        for k in hot_servers.client_of(server).scan_iter(match=f"*{topic}*"):
            name = k.decode()
            if any(sep + topic + end in name + ":" for sep in (":", "{")
                   for end in (":", "}", ".")):
                found.append(name)
    return sorted(found)


def test_a_topic_dropped_is_deleted_alone_under_every_lease_and_the_others_step_on(
        sharded, loads):
    """A topic deleted costs no whole tick: its sets, records and rows go by its name
    under every lease with no set loaded, the others' encodings stay as they were, and a
    topic made again under the name later is a topic added. (Found here by comparing the
    rows; test_topology_controllers.py folds the intent.)"""
    from cluster.adapters import hot_servers
    from cluster.models import Topic
    from cluster.ports import log_head, read_log
    from cluster.services import topic_delete

    topic_create(name="late", partitions=8, replication=2)
    sharded_tick()
    for p in range(8):
        queue = LocalQueue()
        records_produce(topic="late", partition=p, acks=1, count=2, dispatch=queue)
        queue.drain()
    produce(3)
    sharded_tick()
    assert hot_keys_naming("late")
    pk = Topic.objects.get(name="late").pk
    orders = {s: hot_servers.client_of(s).hgetall(hot_state.sets_key("orders"))
              for s in hot_servers.servers()}
    ids = sorted(record_ids())
    since = log_head()
    topic_delete(name="late")
    loads["sets"].clear()
    assert sharded_tick() is None  # the topics' unit ran, no shard task
    assert loads == {"sets": [0, 0], "whole": []}
    assert hot_keys_naming("late") == []
    assert "late" not in hot_state.replicated_topics()
    assert {s: hot_servers.client_of(s).hgetall(hot_state.sets_key("orders"))
            for s in hot_servers.servers()} == orders
    dropped = [e.data for e in read_log(since + 1) if e.data["type"] == "topic-dropped"]
    assert dropped == [{**dropped[0], "topic": "late", "topic_pk": pk}]
    assert sorted(record_ids()) == [i for i in ids if i in set(record_ids())]
    assert {k[0] for k in hot_state.load().state.replica_sets} == {"orders"}
    produce(5)
    assert sharded_tick() is not None
    CHECKER[:] = [InvariantChecker()]  # a new topic under the name: its HW starts again
    topic_create(name="late", partitions=2, replication=2)  # made again: a topic added
    assert sharded_tick() is None and not loads["whole"]
    assert sorted(p for t, p in hot_state.load().state.replica_sets if t == "late") == [0, 1]
    assert sharded_tick() is not None


def _index_checked(exact: bool) -> None:
    """Each shard's index of its sets by SPU (spu_index.py) is used only when exact, and then
    names every set with a replica on the SPU; the SPU's sets are found either way."""
    from cluster.adapters import spu_index

    hot = hot_state.load()
    with bound_to_store():
        for spu in range(4):
            truth = sorted(k for k, rs in hot.state.replica_sets.items() if spu in rs.replicas)
            found = spu_index.find(hot.topics, {spu})
            assert (found is not None) == exact, (spu, found)
            if found is not None:
                assert found == truth, spu
            assert sorted(hot_state.keys_holding(hot.topics, {spu})) == truth, spu


def test_each_shards_index_of_its_sets_by_spu_is_exact_or_not_used(sharded):
    """Carried by every save that changed no replicas, patched by one that changed some (a
    topic made under every lease, a move started by a unit of one set, and ended by the
    shard's tick), written again by a unit that loaded the whole shard when it was behind,
    and left behind by any other: a topic dropped under every lease, a save that read no
    marker."""
    from cluster.core import replication as core
    from cluster.engine.engine import current as engine
    from cluster.services import topic_delete

    _index_checked(exact=True)  # the whole tick wrote every shard's
    sharded_tick()
    produce(3)  # a unit of one set's shard: carried
    _index_checked(exact=True)
    topic_create(name="late", partitions=8, replication=2)
    assert sharded_tick() is None  # made under every lease, no shard loaded whole: patched
    _index_checked(exact=True)
    sharded_tick()
    _index_checked(exact=True)
    hot = hot_state.load()
    rs = hot.state.replica_sets[("late", 0)]
    target = tuple(s for s in range(4) if s not in rs.replicas)[:1] + tuple(rs.replicas[:1])
    with engine().unit(keys=[("late", 0)]) as u:
        u.actions += core.handle(u.state.state, core.ReassignPartition("late", 0, target))
    _index_checked(exact=True)  # the move's new replica: that shard's fields patched
    for _ in range(6):
        sharded_tick()
    assert tuple(hot_state.load().state.replica_sets[("late", 0)].replicas) == target
    _index_checked(exact=True)  # the move's end written too
    spu_offline(spu_id=1)
    assert sharded_tick() is None  # the SPU's sets alone: no replica moved, carried
    _index_checked(exact=True)
    topic_delete(name="late")
    assert sharded_tick() is None
    _index_checked(exact=False)
    sharded_tick()
    _index_checked(exact=True)
    with hot_state.locked() as held:  # a save that read no marker moves the generations
        hot = hot_state.load()
        hot.state.replica_sets[("orders", 1)].epoch += 1
        hot_state.save(hot, held)
    _index_checked(exact=False)
    sharded_tick()
    _index_checked(exact=True)


def test_an_index_made_under_another_shard_count_is_not_used(sharded, settings):
    _index_checked(exact=True)
    from cluster.adapters import hot_servers

    settings.REPLICATION_SHARDS = 2  # the shards' sets are others now (shards.shard_of)
    if not hot_servers.spread():  # (spread, the sets move first: a whole tick, no reader)
        _index_checked(exact=False)
    sharded_tick()
    sharded_tick()
    _index_checked(exact=True)
