"""The save passes over steady sets it already encoded (core.replication.steady): every
set a unit of work takes from this process's set cache must still encode to the very
bytes Redis holds, through produces, stopped loops and SPUs going and coming back."""
from __future__ import annotations

import pytest

from cluster.adapters import hot_state
from cluster.adapters.set_codec import encode_status
from cluster.core.replication import cluster_from_dict, cluster_to_dict
from cluster.core.replication.compaction import reference_replica
from cluster.engine.engine import current as engine
from cluster.engine.engine import using
from cluster.services import topic_create
from cluster.services.outages import spu_offline, spu_online
from cluster.services.records import records_produce, topic_set_producer_rate
from cluster.services.replication import replication_tick
from cluster.services.waiting import LocalQueue
from tests.helpers import another_process, register_spus, stored_sets

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def tick(at: int) -> None:
    queue = LocalQueue()
    replication_tick(now=at, dispatch=queue)
    queue.drain()


def kept_against_redis() -> tuple[list, int, list]:
    """(sets whose encoding differs from Redis's bytes, how many were steady, sets whose
    HW is not their leader's LEO) as a unit of work takes them."""
    seen: dict = {}

    def step(hot):
        stored = {}
        for topic in {k[0] for k in hot.state.replica_sets}:
            stored.update({(topic, p): data for p, data in stored_sets(topic).items()})
        # Through a copy: a set in the steady index has its followers' clocks there
        # (Steady.view), not in its replicas; the copy carries the state's own.
        state = cluster_from_dict(cluster_to_dict(hot.state))
        seen["differ"] = [k for k, rs in state.replica_sets.items()
                          if encode_status(rs, reference_replica(rs))[0] != stored.get(k)]
        seen["steady"] = len(hot.state.steady.keys)
        seen["behind"] = [k for k, rs in state.replica_sets.items()
                          if rs.leader is None or rs.hw != rs.replica[rs.leader].leo]
        return []

    with engine().unit(whole=True, dispatch=lambda followups: None) as u:
        step(u.state)
    return seen["differ"], seen["steady"], seen["behind"]


def test_sets_the_save_passed_over_are_what_redis_holds(redis_url, settings):
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=6, replication=3)
    at, steady_seen = 1_000, 0

    def step(what: str, *, level: bool = True) -> None:
        nonlocal at, steady_seen
        at += 1_000
        tick(at)
        differ, steady, behind = kept_against_redis()
        assert differ == [], f"after {what}: {differ}"
        # A tick's round brings every live follower level: a set skipped that should
        # not have been stays behind.
        assert not level or behind == [], f"after {what}: {behind} behind"
        steady_seen = max(steady_seen, steady)

    for _ in range(3):
        step("quiet ticks")
    records_produce(topic="orders", partition=0, count=3)
    step("an acks=1 produce")
    records_produce(topic="orders", partition=1, acks="all", count=2)
    step("an acks=all produce")
    hot_state.kill(2)
    step("a stopped loop")
    records_produce(topic="orders", partition=2, count=2)
    step("a produce while SPU 2's loop is stopped", level=False)
    hot_state.revive(2)
    for _ in range(3):
        step("the loop back")
    assert steady_seen >= 4  # the save did pass over steady sets


def test_sets_the_producers_write_at_every_tick_stay_steady_and_match_redis(redis_url):
    """A simulated producer writing every partition at every tick: its appends keep the
    steady sets in the index (core.replication.steady ``appended``), the round levels
    them and the save writes their short encoding (steady_codec); every set
    still encodes to what Redis holds and every follower is level after each tick."""
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=6, replication=3)
    topic_set_producer_rate(name="orders", rate=6.0)
    at, steady_seen = 1_000, 0
    for i in range(6):
        at += 1_000
        tick(at)
        differ, steady, _ = kept_against_redis()
        assert differ == [], f"tick {i}: {differ}"
        steady_seen = max(steady_seen, steady)
        # The tick's round levelled what the last tick appended (the producers run after
        # the round): HW is one record behind the leader, no more.
        sets = _sets().values()
        assert {(rs.hw, rs.leo) for rs in sets} == {(max(0, i - 1), i)}, f"tick {i}"
    topic_set_producer_rate(name="orders", rate=0.0)
    for i in range(2):  # the round levels the last appends, and nothing appends again
        at += 1_000
        tick(at)
        differ, _, behind = kept_against_redis()
        assert differ == [] and behind == [], f"producer stopped, tick {i}: {differ} {behind}"
    records_produce(topic="orders", partition=0, acks="all", count=2)
    for i in range(2):
        at += 1_000
        tick(at)
        differ, _, _ = kept_against_redis()
        assert differ == [], f"after acks=all, tick {i}: {differ}"
    assert steady_seen == 6  # every busy set stayed in the index


def _sets() -> dict:
    seen: dict = {}

    def step(hot):
        # A steady set's followers as the index keeps them (core.replication.steady).
        view = hot.state.steady.view
        seen.update({k: view(rs) for k, rs in hot.state.replica_sets.items()})
        return []

    with engine().unit(whole=True, dispatch=lambda followups: None) as u:
        step(u.state)
    return seen


def steady_as_loaded() -> tuple[set, set]:
    """(the sets in the steady index, those with an encoding template kept) as a unit of
    work's load leaves them, before any round."""
    seen: dict = {}
    with engine().unit(whole=True, dispatch=lambda followups: None) as u:
        index = u.state.state.steady
        seen["steady"], seen["memo"] = set(index.keys), set(index.memo)
    return seen["steady"], seen["memo"]


def test_a_load_after_another_process_wrote_one_set_keeps_the_others_steady(redis_url):
    """A complete load takes the sets it finds as this process committed them with their
    place in the steady index and their templates (set_loading.adopt); only the set the
    other process wrote is read anew and left out. Before, one outside produce emptied
    the index and every template was built again at the next tick."""
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=6, replication=3)
    topic_set_producer_rate(name="orders", rate=6.0)
    for at in (1_000, 2_000, 3_000):
        tick(at)
    every = {("orders", p) for p in range(6)}
    assert steady_as_loaded() == (every, every)
    with using(another_process()):
        records_produce(topic="orders", partition=2, count=1)
    assert steady_as_loaded() == (every - {("orders", 2)}, every - {("orders", 2)})
    differ, _, _ = kept_against_redis()
    assert differ == []


def test_sets_kept_steady_across_other_processes_writes_match_redis_at_every_tick(
        redis_url, monkeypatch):
    """The producers write every partition at every tick while other processes produce,
    take an SPU offline and back and stop a loop: after each tick every set still
    encodes to what Redis holds, and with every loop live, every follower is level."""
    register_spus(0, 1, 2, 3, online=True)
    topic_create(name="orders", partitions=8, replication=3)
    topic_set_producer_rate(name="orders", rate=8.0)
    at, carried = 1_000, []
    real_load = hot_state._load

    def load(*args, **kwargs):  # how many sets the first load after an outside write kept
        hot = real_load(*args, **kwargs)
        if watching and hot.complete:
            carried.append(len(hot.state.steady.keys))
            watching.clear()
        return hot

    watching: list[bool] = []
    monkeypatch.setattr(hot_state, "_load", load)

    def step(what: str, *, level: bool = True) -> None:
        nonlocal at
        at += 1_000
        tick(at)
        differ, _, _ = kept_against_redis()
        assert differ == [], f"after {what}: {differ}"
        if level:  # the producers append after the round: one record ahead, no more
            assert {rs.leo - rs.hw for rs in _sets().values() if rs.leader is not None} \
                <= {0, 1}, f"after {what}"

    for _ in range(2):
        step("busy ticks")
    outside = [
        ("an outside acks=1 produce", lambda: records_produce(topic="orders", partition=0,
                                                             count=2), True),
        ("an outside acks=all produce", lambda: records_produce(
            topic="orders", partition=1, acks="all", count=2), True),
        ("an outside SPU offline", lambda: spu_offline(spu_id=3), False),
        ("the SPU online again", lambda: spu_online(spu_id=3), False),
        ("an outside loop stopped", lambda: hot_state.kill(2), False),
        ("the loop back", lambda: hot_state.revive(2), False),
    ]
    for what, act, level in outside:
        with using(another_process()):
            act()
        watching.append(True)
        step(what, level=level)
        step(f"a tick after {what}", level=level)
    for _ in range(3):
        step("busy ticks again")
    # The ticks' loads after the outside produces kept the 7 sets they did not write.
    assert carried[:2] == [7, 7], carried


def test_an_outage_leaves_the_down_spus_sets_steady_frozen_on_it_and_as_redis_holds_them(
        redis_url):
    """With SPU 3 down and a producer writing every partition at every tick, the sets with
    a replica on it stay in the steady index (out of the LRS, that replica is never
    visited): its figures do not move, the others stay level, and every set encodes to
    what Redis holds. Back online, it catches up and rejoins the LRS."""
    register_spus(0, 1, 2, 3, online=True)
    topic_create(name="orders", partitions=8, replication=3)
    topic_set_producer_rate(name="orders", rate=8.0)
    at = 1_000

    def step(what: str) -> dict:
        nonlocal at
        at += 1_000
        tick(at)
        differ, steady, _ = kept_against_redis()
        assert differ == [], f"after {what}: {differ}"
        sets = _sets()
        # Level but for the producers' last append (they run after the round).
        assert {rs.leo - rs.hw for rs in sets.values()} <= {0, 1}, what
        return {"steady": steady, "sets": sets}

    for _ in range(2):
        step("busy ticks")
    spu_offline(spu_id=3)
    step("the SPU offline")
    on_it = [k for k, rs in _sets().items() if 3 in rs.replicas]
    assert on_it, "some set has a replica on SPU 3"
    frozen = {k: (rs.replica[3].leo, rs.replica[3].hw) for k, rs in _sets().items()
              if k in on_it}
    for i in range(3):
        seen = step(f"outage tick {i}")
        assert seen["steady"] == 8, f"outage tick {i}: {seen['steady']} steady of 8"
        for k in on_it:
            rs = seen["sets"][k]
            assert 3 not in rs.lrs and rs.leader != 3, k
            assert (rs.replica[3].leo, rs.replica[3].hw) == frozen[k], k
    spu_online(spu_id=3)
    for i in range(2):
        seen = step(f"back online, tick {i}")
    for k in on_it:
        rs = seen["sets"][k]
        assert 3 in rs.lrs and rs.replica[3].leo >= rs.hw, k
