"""Leader/follower synchronisation (001) and LRS maintenance.

A fetch round is modelled as one atomic exchange: the follower reports its
LEO/HW, the leader sends the missing records, the follower appends them and
reports again, and the leader recomputes the LRS and HW = min LEO over the LRS
and hands the new HW back. HW only advances: rs.hw is the committed HW of the
replica set and survives leader changes (every LRS member holds it).

Lag is judged at a fetch round (001: a follower whose fetching falls behind):
the leader's LEO as of that round minus what the follower holds after it, so a
follower that skipped the round counts everything it missed while one that
fetched counts only what its fetch could not bring. An append alone judges no
lag: a burst the followers have not had a chance to fetch is not lag (Kafka
dropped its message-count rule because bursts made the ISR flap). A follower
leaves the LRS when that lag exceeds the topic's max_lag, or (when the topic
sets lag_time_max_ms and a clock is passed in) when it has been behind for
longer than that. It keeps receiving records and rejoins once LEO >= HW and it
is within both limits; that is Kafka's "caught up", and it can never pull HW
back.
"""
from __future__ import annotations

from collections.abc import Collection, Iterable

from .acks import acknowledge_committed
from .connections import connect
from .reach import fetch_cut
from .events import Action, LrsChanged, ReplicaTruncated
from .state import COMPACTED, ClusterState, Key, Replica, ReplicaSet, Resolution, TopicConfig

_ONLINE = Resolution.ONLINE


def common_prefix(a: Replica, b: Replica, start: int = 0) -> int:
    """Length of the longest shared prefix, trusting offsets below ``start`` to agree.

    Offsets compacted on both replicas agree; one compacted on one side only
    does not (a record id is never COMPACTED).
    """
    n = min(a.leo, b.leo)
    i = max(min(start, n), min(a.start, b.start, n))
    if i < max(a.start, b.start):
        return i
    alog, blog, ao, bo = a.log, b.log, a.start, b.start
    while i < n and alog[i - ao] == blog[i - bo]:
        i += 1
    return i


def truncate(rs: ReplicaSet, spu: int, to: int, reason: str) -> list[Action]:
    r = rs.replica[spu]
    old = r.leo
    if to >= old:
        return []
    dropped = tuple(r.records(to, old))
    r.truncate(to)
    r.hw = min(r.hw, to)
    return [ReplicaTruncated(rs.topic, rs.partition, spu, old, to, reason, dropped)]


def align_with_leader(rs: ReplicaSet, spu: int) -> list[Action]:
    """Drop the follower's records that diverge from the leader's log.

    Real SPUs find the point with leader epochs (Kafka KIP-101); here the logs
    are at hand. Records below the replica's own HW are committed, so the
    search starts there.
    """
    f, leader = rs.replica[spu], rs.replica[rs.leader]
    keep = common_prefix(f, leader, f.hw)
    return truncate(rs, spu, keep, f"diverged from leader {rs.leader}")


def _pull(r: Replica, leader: Replica, leo: int,
          max_records: int | None) -> tuple[int, int, tuple[int, ...]] | None:
    """Append the missing records; return (old LEO, kept, ids cut) if a stale tail was cut."""
    # Replica.leo/last/at/copy_from spelled out for the usual case: this runs per fetch.
    log, first = r.log, leader.start
    n = r.start + len(log)
    cut = None
    if n and (n > leo or (log[-1] if log else r.last()) != (
            leader.log[n - 1 - first] if n > first else COMPACTED)):
        # Cheap per-fetch epoch check; only a stale log pays for the full scan.
        keep = common_prefix(r, leader, r.hw)
        dropped = tuple(r.records(keep, n))
        r.truncate(keep)
        cut, n = (n, keep, dropped), keep
    if n < leo:
        end = leo if max_records is None else min(leo, n + max_records)
        if n >= first:
            r.log.extend(leader.log[n - first:end - first])
        else:
            r.copy_from(leader, end)
    return cut


def _in_sync(r: Replica, was_in: bool, leo: int | None, hw: int, cfg: TopicConfig,
             now_ms: int | None) -> bool:
    # start + len(log) is r.leo, spelled out: this runs per follower and step.
    held = r.start + len(r.log)
    lag = 0 if leo is None else leo - held
    if now_ms is not None and (lag == 0 or r.caught_up_ms is None):
        r.caught_up_ms = now_ms
    if lag > cfg.max_lag:
        return False
    if (cfg.lag_time_max_ms is not None and now_ms is not None and lag > 0
            and now_ms - r.caught_up_ms > cfg.lag_time_max_ms):
        return False
    return was_in or held >= hw


def _next_lrs(state: ClusterState, rs: ReplicaSet, cfg: TopicConfig, leo: int | None,
              now_ms: int | None) -> list[int]:
    spus, leader, lrs = state.spus, rs.leader, rs.lrs
    out = []
    for s in rs.replicas:
        if s == leader:
            out.append(s)
        elif spus[s] and _in_sync(rs.replica[s], s in lrs, leo, rs.hw, cfg, now_ms):
            out.append(s)
    return out


def leader_update(state: ClusterState, rs: ReplicaSet, now_ms: int | None = None, *,
                  fetched_leo: int | None = None) -> list[Action]:
    """Leader side of 001: refresh the LRS, then HW = min LEO over the LRS.

    ``fetched_leo`` is the leader's LEO as of the fetch round being judged;
    without one (an append, an election) nobody's lag is judged.
    """
    if state.steady.keys:
        state.steady.leave(rs)
    cfg = state.topics[rs.topic]
    leader = rs.replica[rs.leader]
    rep = rs.replica
    if rs.lrs == rs.replicas and state.steady.enabled and _level(state, rs, fetched_leo, now_ms):
        lrs, changed = rs.lrs, False
    else:
        lrs = _next_lrs(state, rs, cfg, fetched_leo, now_ms)
        changed = lrs != rs.lrs
        rs.lrs = lrs
    actions: list[Action] = []
    hw = min([rep[s].start + len(rep[s].log) for s in lrs])
    # HW may only advance: a late report from a removed follower must not pull it back.
    if hw > rs.hw:
        rs.hw = hw
        if rs.pending:
            actions += acknowledge_committed(rs, cfg.min_lrs)
    leader.hw = rs.hw
    if changed:
        actions.append(LrsChanged(rs.topic, rs.partition, rs.leader, tuple(lrs), rs.hw))
    return actions


def _level(state: ClusterState, rs: ReplicaSet, fetched_leo: int | None,
           now_ms: int | None) -> bool:
    """Whether every follower is online and holds the LEO being judged (any, when none
    is judged): then each is in sync with no lag, the LRS (every replica) stays as it is,
    and ``_next_lrs`` would only set their caught-up clocks, done here. The common case
    of a busy set, at every append and fetch round: the same rule, without its lists.
    Off with the steady index (``Steady.enabled``), so the proof test's reference runs
    take the general path."""
    spus, rep, leader = state.spus, rs.replica, rs.leader
    for s in rs.replicas:
        if s == leader:
            continue
        r = rep[s]
        if not spus[s] or (fetched_leo is not None and r.start + len(r.log) != fetched_leo):
            return False
        if now_ms is not None:  # lag 0: caught up now (_in_sync)
            r.caught_up_ms = now_ms
    return True


def _cut_report(rs: ReplicaSet, r: Replica,
                cut: tuple[int, int, tuple[int, ...]] | None) -> list[Action]:
    if cut is None:
        return []
    return [ReplicaTruncated(rs.topic, rs.partition, r.spu, cut[0], cut[1],
                             f"diverged from leader {rs.leader}", cut[2])]


def follower_fetch(state: ClusterState, rs: ReplicaSet, spu: int, *,
                   max_records: int | None = None, now_ms: int | None = None) -> list[Action]:
    """One fetch round of one follower; a no-op unless both ends are live."""
    if (rs.resolution is not _ONLINE or spu == rs.leader or spu not in rs.replica
            or not state.spus.get(spu) or (spu, rs.leader) in fetch_cut(state)
            or spu in rs.unaware):
        return []
    if state.steady.keys:
        state.steady.leave(rs)
    leader = rs.replica[rs.leader]
    connect(state, spu, rs.leader)
    r = rs.replica[spu]
    actions = _cut_report(rs, r, _pull(r, leader, leader.leo, max_records))
    actions += leader_update(state, rs, now_ms, fetched_leo=leader.leo)
    r.hw = min(rs.hw, r.leo)
    return actions


def replication_step(state: ClusterState, now_ms: int | None = None,
                     max_records: int | None = None,
                     stopped: frozenset[int] | set[int] = frozenset(),
                     keys: Iterable[Key] | None = None) -> list[Action]:
    """One fetch round for every live follower of every Online replica set (of ``keys``
    only, when given: a write someone waits for is fetched as it lands, Kafka's fetch
    parked at the leader, without a round for every other set).

    ``stopped`` SPUs are ones whose loop died while the SC still believes them
    online (a crash not yet noticed): they neither fetch nor answer fetches,
    so they stay in the LRS until they lag too far or the SC marks them offline.

    A round over every set skips the steady ones (``steady``: it would change nothing in
    them but their followers' clocks, which the index keeps as the round's time), levels
    those the producers appended to since (``_level_appended``) and adds those it leaves
    steady.
    """
    actions: list[Action] = []
    spus, conns = state.spus, state.connections
    # Follower -> leader pairs a network cut separates: they neither fetch nor serve.
    severed = fetch_cut(state) if state.cuts else ()
    sets = state.replica_sets
    index = state.steady
    skipping = _prepare_round(state, stopped, now_ms, keys, max_records)
    if skipping and index.appended:
        _level_appended(state)
    steady = index.keys
    if keys is not None:
        todo = [sets[k] for k in keys if k in sets]
    elif steady:
        todo = [sets[key] for key in index.unsteady_keys(sets)]
    else:
        todo = list(sets.values())
    for rs in todo:
        leader = rs.leader
        if leader is None or rs.resolution is not _ONLINE or leader in stopped:
            continue
        lead = rs.replica[leader]
        llog = lead.log
        leo, last = lead.start + len(llog), llog[-1] if llog else lead.last()
        live = [rs.replica[s] for s in rs.replicas
                if s != leader and spus[s] and s not in stopped]
        if severed:
            live = [r for r in live if (r.spu, leader) not in severed]
        if rs.unaware:  # followers that missed the new epoch do not know whom to fetch from
            live = [r for r in live if r.spu not in rs.unaware]
        for r in live:
            conns.add((r.spu, leader))
            # r.leo and r.last() spelled out: the common case is a caught-up follower.
            log = r.log
            if r.start + len(log) != leo or (log[-1] if log else r.last()) != last:
                cut = _pull(r, lead, leo, max_records)
                if cut is not None:
                    actions += _cut_report(rs, r, cut)
        out = leader_update(state, rs, now_ms, fetched_leo=leo)
        if out:
            actions += out
        hw = rs.hw
        for r in live:
            rleo = r.start + len(r.log)
            r.hw = hw if rleo >= hw else rleo
        # A set this round fetched into joins too: the producers' appends keep it in
        # (``steady``: ``appended``), so a set written to at every tick stays steady.
        if skipping and _is_steady(state, rs, stopped):
            index.enter((rs.topic, rs.partition), rs)
    if skipping:
        index.round_ms = now_ms
    return actions


def _level_appended(state: ClusterState) -> None:
    """The round's work on the steady sets the producers appended to (``steady``:
    ``appended``): every follower fetches what the leader gained, and HW becomes the
    leader's LEO on every replica. What the full round does to them: each follower is
    live (the index holds no set of an SPU whose status or loop changed since it was
    built, and none while a cut is in force), holds the leader's log up to its old end
    from the same start, so it is in sync with no lag, the LRS (every replica) stays and
    no acks=all write waits; its caught-up clock is the index's (this round's time).

    Nothing of it is written in the sets: their followers are not kept while they stay
    in (``steady.LAZY``), and their HW is the leader's LEO once their keys move to
    ``levelled`` (``Steady.view``; the producers' next append or the save writes it)."""
    index = state.steady
    appended = index.appended
    # Changed: the shell's save encodes them again (a save since the append marked them).
    # Every steady set appended to (an all-busy tick): none stays saved, without a probe each.
    if len(appended) == len(index.keys):
        index.saved.clear()
    else:
        index.saved.difference_update(appended)
    if not index.fresh:  # after a save: a copy of the dict, not its keys inserted one by one
        index.fresh = appended.copy()
    elif len(index.fresh) != len(index.keys):  # else every steady set is fresh already
        index.fresh.update(appended)
    if index.levelled:
        index.levelled.update(appended)
    else:
        index.levelled = appended
    index.appended = {}


def _prepare_round(state: ClusterState, stopped: Collection[int], now_ms: int | None,
                  keys: Iterable[Key] | None, max_records: int | None = None) -> bool:
    """Before a fetch round: drop from the index what the round must look at again;
    return whether the round may skip the sets left in it (and add steady ones)."""
    index, sets = state.steady, state.replica_sets
    if not index.enabled:
        return False
    if keys is not None:
        # A round over named sets (a write someone waits for) runs them in full.
        for key in keys:
            index.leave_key(sets, key)
        return False
    if now_ms is None or state.cuts:
        # Without a clock the round's clocks are not the rounds' own; with a cut, who
        # reaches whom changes without a set being touched.
        index.leave_all(sets)
        return False
    if max_records is not None:
        # A fetch that may stop short of the leader's LEO: the full rules judge that lag.
        for key in list(index.appended):
            index.leave_key(sets, key)
    stopped = frozenset(stopped)
    if index.spus != state.spus or index.stopped != stopped:
        changed = {s for s in set(index.spus) | set(state.spus)
                   if index.spus.get(s) != state.spus.get(s)} | (index.stopped ^ stopped)
        if index.keys:
            for spu in changed:
                for key in list(state.keys_of(spu)):
                    index.leave_key(sets, key)
        index.spus, index.stopped = dict(state.spus), stopped
    return True


def _is_steady(state: ClusterState, rs: ReplicaSet, stopped: Collection[int]) -> bool:
    """The round would change nothing in ``rs`` but its followers' clocks (``steady``).

    A replica whose SPU is offline may be one of them while it is out of the LRS (an
    outage rehearsal's thousands of sets): it neither fetches nor is judged, so the round
    leaves it as it is, clock included; the others are level with the leader as always."""
    leader = rs.leader
    if (leader is None or rs.resolution is not _ONLINE or rs.pending or rs.move is not None
            or rs.deposed or rs.unaware or rs.candidate is not None
            or rs.deadline_ms is not None):
        return False
    spus, rep, hw, lrs = state.spus, rs.replica, rs.hw, rs.lrs
    # The LRS in replica order (the round rebuilds it in that order): every replica, or
    # every one but those whose SPU is offline.
    if lrs != rs.replicas and lrs != [s for s in rs.replicas if spus[s]]:
        return False
    lead = rep[leader]
    llog, start = lead.log, lead.start
    if start + len(llog) != hw or lead.hw != hw:
        return False
    last = llog[-1] if llog else None
    for s in lrs:
        if not spus[s] or s in stopped:
            return False
        r = rep[s]
        if r is lead:
            continue
        log = r.log
        if (r.start != start or len(log) != len(llog) or r.hw != hw
                or (log[-1] if log else None) != last):
            return False
    return len(lrs) == len(rs.replicas) or not any(s in stopped for s in rs.replicas)
