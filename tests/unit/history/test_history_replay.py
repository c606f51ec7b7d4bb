"""History replay's pure core (issue 21): a moment is the fold of the log, a snapshot
round-trips it, checkpoints carry HW/LEO, and a diff names what moved."""
from __future__ import annotations

from cluster.core.replication import (Acks, ProduceRequest, SpuOffline, add_topic, handle,
                                      new_cluster, produce, replication_step, run_elections)
from cluster.core.replication import metadata
from history.core import diff as history_diff
from history.core import replay as history
from cluster.core.replication.metadata import Status, status_of
from cluster.core.replication.state import Resolution


def _log() -> list[tuple[int, dict]]:
    state = new_cluster([1, 2, 3])
    add_topic(state, "t", [[1, 2, 3], [2, 3, 1]])
    entries = [{"type": "spu-registered", "spu": s, "at": 1} for s in (1, 2, 3)]
    entries += [{"type": "spu-sync", "spu": s, "online": True, "at": 2} for s in (1, 2, 3)]
    entries.append({**metadata.topic_entry("t", state.replica_sets.values()), "at": 3})
    produce(state, ProduceRequest("t", 0, Acks.ALL, 5))
    replication_step(state)
    rs = state.replica_sets[("t", 0)]
    entries.append({**history.checkpoint_entry(
        {("t", 0): (rs.hw, tuple((s, rs.replica[s].leo, rs.replica[s].hw)
                                 for s in rs.replicas))}), "at": 4})
    old = status_of(state.replica_sets[("t", 1)])
    handle(state, SpuOffline(2))
    run_elections(state, now_ms=1)  # the candidate, SPU 3, answers
    entries.append({"type": "spu", "spu": 2, "resolution": "Offline", "from": "Online", "at": 5})
    entries.append({**metadata.partition_entry(("t", 1), old,
                                               status_of(state.replica_sets[("t", 1)]), ""),
                    "at": 5})
    return list(enumerate(entries, start=1))


def test_a_moment_is_the_fold_of_the_entries_up_to_its_offset():
    log = _log()
    before = history.replay(history.Moment(), log[:-2])
    after = history.replay(history.Moment(), log)
    assert before.statuses[("t", 1)].leader == 2 and after.statuses[("t", 1)].leader == 3
    assert before.spus == {1: True, 2: True, 3: True} and after.spus[2] is False
    assert (after.offset, after.at) == (len(log), 5)


def test_a_row_has_the_partition_list_shape_with_the_checkpointed_offsets():
    m = history.replay(history.Moment(), _log())
    row, waiting = history.partition_at(m, ("t", 0))
    assert set(row) == {"topic", "partition", "leader", "replicas", "lrs", "resolution", "hw",
                        "leo", "replica_status"}
    assert (row["hw"], row["leo"]) == (5, 5) and waiting == ()
    assert [r["spu"] for r in row["replica_status"]] == [1, 2, 3]
    untouched, _ = history.partition_at(m, ("t", 1))
    assert untouched["hw"] == 0  # never checkpointed: nothing committed there


def test_an_offline_partition_waits_for_its_last_lrs_members_that_are_down():
    m = history.Moment(statuses={("t", 0): Status((1, 2), None, (1,), Resolution.OFFLINE, 3)},
                       spus={1: False, 2: True})
    assert history.partition_at(m, ("t", 0))[1] == (1,)


def test_a_snapshot_round_trips_the_moment():
    m = history.replay(history.Moment(), _log())
    m.killed.add(3)
    back = history.decode(history.encode(m))
    assert (back.statuses, back.offsets, back.spus, back.killed, back.offset, back.at) == (
        m.statuses, m.offsets, m.spus, m.killed, m.offset, m.at)


def test_replaying_from_a_snapshot_equals_replaying_from_offset_zero():
    log = _log()
    snap = history.decode(history.encode(history.replay(history.Moment(), log[:4])))
    assert history.replay(snap, log[4:]) == history.replay(history.Moment(), log)


def test_an_unclean_election_lowers_the_hw_and_a_dropped_topic_is_gone():
    m = history.replay(history.Moment(), _log())
    history.apply(m, 99, {"type": "unclean-election", "topic": "t", "partition": 0,
                          "new_hw": 2, "at": 9})
    assert history.partition_at(m, ("t", 0))[0]["hw"] == 2
    history.apply(m, 100, {"type": "topic-dropped", "topic": "t", "at": 10})
    assert not m.statuses and not m.offsets


def test_the_diff_lists_the_partitions_whose_leader_moved_with_counts_per_spu_and_rack():
    log = _log()
    a = history.replay(history.Moment(), log[:-2])
    b = history.replay(history.Moment(), log)
    report = history_diff.diff(a, b, {1: "r1", 2: "r1", 3: "r2"})
    assert [(r["topic"], r["partition"], r["leader"]) for r in report["partitions"]] == [
        ("t", 1, {"from": 2, "to": 3})]
    assert report["counts"]["leader"] == 1
    spu2 = next(s for s in report["spus"] if s["spu"] == 2)
    assert (spu2["leaders_from"], spu2["leaders_to"]) == (1, 0)
    assert {r["rack"]: r["leaders_to"] for r in report["racks"]} == {"r1": 1, "r2": 1}


def test_totals_count_leaderless_under_replicated_and_offline():
    m = history.Moment(statuses={
        ("t", 0): Status((1, 2), None, (1,), Resolution.OFFLINE, 1),
        ("t", 1): Status((1, 2), 2, (2,), Resolution.ONLINE, 1),
        ("t", 2): Status((1, 2), 1, (1, 2), Resolution.ONLINE, 1)}, spus={1: False, 2: True})
    t = history.totals(m)
    assert (t["offline"], t["leaderless"], t["under_replicated"], t["spus_offline"]) == (1, 1, 2, 1)


def test_no_checkpoint_entry_when_nothing_moved():
    assert history.checkpoint_entry({}) is None


def test_racks_come_from_the_log_and_a_moved_spu_counts_in_each_moments_rack():
    log = _log()
    racked = [(o, {**e, "rack": f"r{e['spu']}"} if e["type"] == "spu-registered" else e)
              for o, e in log]
    a = history.replay(history.Moment(), racked)
    b = history.replay(a.copy(), [(len(log) + 1, {"type": "spu-rack", "spu": 3, "rack": "r1",
                                                  "at": 6})])
    assert a.racks == {1: "r1", 2: "r2", 3: "r3"} and b.racks[3] == "r1"
    assert history.decode(history.encode(b)).racks == b.racks
    # Entries written before racks were logged: no rack, today's is used by the caller.
    assert history.replay(history.Moment(), log).racks == {}
    rows = {r["rack"]: r for r in history_diff.diff(a, b, {})["racks"]}
    assert rows["r3"]["replicas_from"] > 0 and rows["r3"]["replicas_to"] == 0
    assert rows["r1"]["replicas_to"] == rows["r1"]["replicas_from"] + rows["r3"]["replicas_from"]
    gone = history.replay(b.copy(), [(len(log) + 2, {"type": "spu-forgotten", "spu": 3})])
    assert 3 not in gone.racks
