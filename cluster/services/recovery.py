"""A hot state that lost entries is found by log offsets, and what it lost is reported once.

The store's projection records the last metadata-log offset it applied; a
Redis that kept its data holds a log whose head is at least that offset (its
append-only file is written before any projection reads the entry). Once per
Redis server run the tick compares the two: a head below the store's offset
means Redis came back older than the store (no append-only file, or an older
one). Then, and only then, every set below its row's floor, max(hw, reserved_to),
is brought up to it with compacted logs (the records themselves are gone),
offsets go on from there, and one ``hot-state-lost`` entry counts, per partition,
the offsets between what Redis kept and that floor: an upper bound of the
committed records gone. The reservation (engine/mirror.py) is raised before any
commit whose LEO would pass it, so every offset the lost state gave out, hence
every acknowledged one, is below it and none is given out twice, though the row's
HW may trail the hot state by the mirror's interval. A plain restart that lost
nothing restores nothing (the log says so, not the figures).

Records an earlier loss already reported (below the HW it restored, kept in its
event) are not counted again, so the reports of successive losses add up to what
was acknowledged and is gone. The fence counter is carried past the store's
highest token at each check: an older Redis counts from an older figure, and
the store's rows would refuse its tokens (issue 36).
"""
from __future__ import annotations

from collections.abc import Iterable

from cluster.adapters import hot_servers, hot_state, lease, metadata_log, shards
from cluster.adapters.set_loading import sets_key
from cluster.engine import store_identity
from cluster.adapters.hot_state import HotState
from cluster.core import replication as core
from cluster.core.replication import Key
from cluster.models import Event, Partition
from cluster.projections import store as store_projection

REASON = ("hot state lost: up to {missing} committed records of {partitions} partition(s) are gone "
          "(Redis came back without them: no append-only file, or an older one; its metadata "
          "log ends at offset {head}, the store had applied {applied}); "
          "offsets, HW and LEO go on from the store's figures")


def hot_state_check_against_store(hot: HotState) -> int:
    """Once per Redis server run: if Redis is behind the store's log offset, restore and
    report what is gone; returns the committed records lost."""
    run = hot_state.redis_run_id()
    if hot.checked == run:
        return 0
    # An older append-only file keeps the marker but an older fence counter: carry it on.
    lease.raise_fence(store_identity.store_highest_token())
    head, applied = metadata_log.head(), store_projection.applied_offset()
    lost = hot_state_recover(hot, list(hot.topics), head, applied) if head < applied else 0
    remade = remake_missing_sets(hot) if hot_servers.spread() and hot.full else []
    if remade:
        # Only the remade sets: the others' server kept them, and their reservation is
        # above their LEO by design, not by a loss.
        lost += hot_state_recover(hot, {name for name, _ in remade}, head, applied,
                                  only=set(remade))
    hot.checked = run
    return lost


def checked_without_sets(hot: HotState) -> bool:
    """The same check in a unit that holds no replica set (a sharded coordinator's quiet
    tick): True once this Redis run needs nothing of the sets, noted in ``hot.checked``;
    False when the whole state must check it (``hot_state_check_against_store``).

    Sharded, a restart that lost nothing took a whole tick: every set loaded in one process
    while no shard stepped (5.7-6.9 s at 100,000 partitions, then as long again for the
    shards to read every set anew), to restore nothing. The check reads sets only to
    restore a loss (the log's head below the store's offset) or to remake the sets a spread
    server came back without; neither is the case when the log is whole and every server
    that restarted still holds each set the meta places there (``sets_kept``). The verdict
    is taken before this run's first append to the log, as the whole tick's is.
    """
    run = hot_state.redis_run_id()
    if hot.checked == run:
        return True
    restarted = hot_state.restarted_servers(hot.checked, run)
    if restarted is None or not sets_kept(hot, restarted):
        return False
    lease.raise_fence(store_identity.store_highest_token())
    if metadata_log.head() < store_projection.applied_offset():
        return False
    hot.checked = run
    return True


def sets_kept(hot: HotState, restarted: frozenset[int]) -> bool:
    """Whether each restarted server holds a field for every set the topic table places on
    it. The first server's sets came back from the same file as the meta naming them: a
    prefix of its writes, where a topic's sets there come with the table that names them.
    Any other one is asked, a topic's set count at a time (one round trip): a server back
    empty, or without a topic made since its file was written, holds fewer."""
    others = sorted(restarted - {hot_servers.HOME})
    if not others:
        return True
    count = shards.count()
    expected: dict[int, dict[str, int]] = {server: {} for server in others}
    for shard in range(count):
        server = hot_servers.server_of_shard(shard)
        if server in expected:
            for name, _ in shards.keys_of_shard(hot.topics, shard, count):
                expected[server][name] = expected[server].get(name, 0) + 1
    for server, wanted in expected.items():
        pipe = hot_servers.client_of(server).pipeline(transaction=False)
        names = sorted(wanted)
        for name in names:
            pipe.hlen(sets_key(name))
        if list(pipe.execute()) != [wanted[name] for name in names]:
            return False
    return True


def hot_state_recover(hot: HotState, names: Iterable[str], head: int, applied: int, *,
                      only: set[Key] | None = None) -> int:
    """Bring every set below its row's floor (max of its HW and reservation) up to it;
    note one entry for the loss (``missing``: an upper bound, the offsets skipped).
    ``only``: the sets known lost (else every set of ``names``)."""
    pks = {hot.topics[n]["pk"]: n for n in names if n in hot.topics}
    floors = reported_floors(pks)
    lost: dict[str, dict[str, int]] = {}
    restored: dict[str, dict[str, int]] = {}
    rows = Partition.objects.filter(topic_id__in=pks).values_list("topic_id", "index", "hw",
                                                                 "reserved_to")
    for topic_pk, index, stored_hw, reserved_to in rows:
        name = pks[topic_pk]
        hw = max(stored_hw, reserved_to)
        rs = hot.state.replica_sets.get((name, index))
        if rs is None or hw <= rs.hw or (only is not None and (name, index) not in only):
            continue
        # Offsets an earlier loss already reported gone are not gone a second time.
        gone = hw - max(rs.hw, floors.get((name, index), 0))
        hot.state.steady.leave(rs)  # restored behind the core's back: rounds look at it again
        hot_state.restore_at(rs, hw)
        restored.setdefault(name, {})[str(index)] = hw
        if gone > 0:
            lost.setdefault(name, {})[str(index)] = gone
    # Offsets the lost log had given out stay given: the next entry comes after the store's.
    metadata_log.set_head_at_least(applied)
    if restored:
        # Values of records the lost state had allocated may survive: ids must stay above them.
        floor = hot_state.highest_value_id(hot.topics) + 1
        hot.state.next_record_id = max(hot.state.next_record_id, floor)
    missing = sum(n for parts in lost.values() for n in parts.values())
    reason = REASON.format(missing=missing, partitions=sum(map(len, lost.values())),
                           head=head, applied=applied)
    hot.log.append({"type": "hot-state-lost", "topics": lost, "missing": missing,
                    "restored": restored, "topic_pks": {n: pk for pk, n in pks.items()},
                    "head": head, "applied": applied, "reason": reason})
    return missing


def remake_missing_sets(hot: HotState) -> list[Key]:
    """Spread over several servers, one may come back empty while the first (the meta, the
    log) kept its data: the topic table still names partitions no server holds a set of.
    Each is made again from the store's replica map, led by its first live replica at an
    epoch above the store's, for ``hot_state_recover`` to bring up to the store's HW.
    Returns the sets made again."""
    missing: dict[str, list[int]] = {}
    for name, table in hot.topics.items():
        gone = [i for i in range(len(table["partitions"]))
                if (name, i) not in hot.state.replica_sets]
        if gone and name in hot.state.topics:
            missing[name] = gone
    for name, indexes in missing.items():
        rows = {index: (replicas, epoch) for index, replicas, epoch in Partition.objects
                .filter(topic_id=hot.topics[name]["pk"], index__in=indexes)
                .values_list("index", "replicas", "epoch")}
        if not rows:
            continue  # the topic's rows are gone too: the topology sync drops it
        config = hot.state.topics[name]
        scratch = core.new_cluster([], election_timeout_ms=hot.state.election_timeout_ms)
        scratch.spus = dict(hot.state.spus)
        core.add_topic(scratch, name, {i: rows[i][0] for i in indexes if i in rows},
                       max_lag=config.max_lag, min_lrs=config.min_lrs,
                       lag_time_max_ms=config.lag_time_max_ms,
                       unclean_leader_election=config.unclean_leader_election)
        for set_key, rs in scratch.replica_sets.items():
            rs.epoch = max(rs.epoch, rows[set_key[1]][1] + 1)  # epochs never go back
            hot.state.replica_sets[set_key] = rs
            for spu in rs.replicas:
                hot.state.index_add(set_key, spu)
    return [(name, index) for name, indexes in missing.items() for index in indexes
            if (name, index) in hot.state.replica_sets]


def reported_floors(pks: dict[int, str]) -> dict[tuple[str, int], int]:
    """Per set, the HW an earlier loss restored it to: the records below were reported
    gone then (a topic deleted and made again under its name has another pk)."""
    floors: dict[tuple[str, int], int] = {}
    found = Event.objects.filter(operation="hot-state-lost", object_type="topic",
                                 object_name__in=list(pks.values()))
    for name, params in found.values_list("object_name", "params"):
        if not isinstance(params, dict) or pks.get(params.get("topic_pk", -1)) != name:
            continue
        for index, hw in (params.get("restored_hw") or {}).items():
            at = (name, int(index))
            floors[at] = max(floors.get(at, 0), int(hw))
    return floors
