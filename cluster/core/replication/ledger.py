"""The accounting of a network rehearsal: what a cut cost, record by record.

A rehearsal starts with the first cut while none is in force and is settled
once every cut healed and every partition it left leaderless has a leader
again. Meanwhile every step's actions are counted (``account``): writes
refused (unavailability), acknowledgements by level, acks=1 records
acknowledged, records truncated (with offsets and ids, from
``ReplicaTruncated.records``) and how long each partition had no leader.
``report`` turns that into what the rehearsal kept and lost. The ledger is a
plain dict in the cluster state, saved with it; its record lists are capped
(``LIMIT``) so a long rehearsal under load stays small, and ``capped`` says so.

Only the acks=1 writes a cut puts at risk are listed one by one: those a
deposed leader acknowledged, and those of a leader a cut touches or that is
alone in its LRS (nobody else holds them yet). Any other acks=1 write is
fetched by a follower that no cut separates from its leader and is counted
only; a listed one leaves the list once committed (``_forget_committed``).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from .events import (Action, LeaderChanged, ProduceAccepted, ProduceRefused,
                     RecordsAcknowledged, ReplicaTruncated)
from .reach import blocked_pairs
from .state import Acks, ClusterState

LIMIT = 20_000
KEPT = 1000  # records listed per kind once settled (the counts stay exact)
_ACKS = {Acks.NONE: "0", Acks.LEADER: "1", Acks.ALL: "all"}


def _name(topic: str, partition: int) -> str:
    return f"{topic}/{partition}"


def begin(state: ClusterState, at: int, label: str) -> None:
    """A cut: a new rehearsal unless one is still running."""
    r = state.rehearsal
    if r is None or r.get("healed_ms") is not None:
        state.rehearsal = r = {
            "started_ms": at, "healed_ms": None, "cuts": [], "refused": {},
            "acked": {"0": 0, "1": 0, "all": 0}, "acks1": [], "truncated": [],
            "leaderless_since": {}, "leaderless_ms": {}, "capped": False}
    r["cuts"].append(label)


def healed(state: ClusterState, at: int) -> None:
    """The last cut healed: this step's actions (the rejoins' truncations) still count,
    then the rehearsal settles once every partition has a leader."""
    if state.rehearsal is not None and not state.cuts:
        state.rehearsal["heal_ms"] = at


def partial(state: ClusterState) -> None:
    """Steps ran elsewhere that this ledger never sees (the shell's shard units do not save
    the cluster meta): the report says its counts are incomplete."""
    if active(state):
        state.rehearsal["partial"] = True


def active(state: ClusterState) -> bool:
    r = state.rehearsal
    return (r is not None and "settled" not in r
            and (r["healed_ms"] is None or bool(r["leaderless_since"])))


def account(state: ClusterState, actions: Iterable[Action], at: int, *,
            complete: bool = True) -> None:
    """Count one step's actions into the running rehearsal (a no-op when none runs).

    ``complete`` False: other steps run where this ledger never sees them (the shell's
    shard units), so the report will say its counts are incomplete."""
    if not active(state):
        return
    if not complete:
        partial(state)
    r = state.rehearsal
    touched = {s for pair in blocked_pairs(state) for s in pair if isinstance(s, int)}
    for a in actions:
        if isinstance(a, RecordsAcknowledged) and a.acks is Acks.LEADER:
            _acks1(state, r, a, touched)
        else:
            _count(r, a, at)
    if len(r["acks1"]) > LIMIT // 2:
        _forget_committed(state, r)
    if r.get("heal_ms") is not None:
        r["healed_ms"] = r.pop("heal_ms")
    if not active(state):
        _settle(state, at)


def simulated(state: ClusterState, acks: Acks, records: int) -> None:
    """Writes of the simulated producers a leader accepted: nobody waits for their answer,
    so no action says so (``produce_many``), but /metrics counts them in records_produced
    and the report counts them beside the answered ones."""
    if records and active(state):
        written = state.rehearsal.setdefault("simulated", {})
        written[_ACKS[acks]] = written.get(_ACKS[acks], 0) + records


def _settle(state: ClusterState, at: int) -> None:
    """Keep the settled report only, its record lists cut to ``KEPT``: the cluster meta
    is saved every tick, and the raw lists would weigh on every tick until the next cut."""
    done = report(state, at)
    for name in ("acks1_truncated", "truncated"):
        done[name] = done[name][:KEPT]
    state.rehearsal = {"settled": done, "healed_ms": done["healed_ms"]}


def _count(r: dict[str, Any], a: Action, at: int) -> None:
    if isinstance(a, (ProduceRefused, ProduceAccepted, RecordsAcknowledged)):
        _writes(r, a)
    elif isinstance(a, ReplicaTruncated):
        _keep(r, "truncated", len(a.records), lambda: [
            [a.topic, a.partition, a.spu, a.new_leo + i, rid] for i, rid in enumerate(a.records)])
    elif isinstance(a, LeaderChanged):
        _leaders(r, a, at)


def _acks1(state: ClusterState, r: dict[str, Any], a: RecordsAcknowledged,
           touched: set[int]) -> None:
    r["acked"]["1"] += len(a.records)
    rs = state.replica_sets.get((a.topic, a.partition))
    at_risk = (a.spu is not None or rs is None or rs.leader in touched or len(rs.lrs) < 2)
    if at_risk:
        _keep(r, "acks1", len(a.records),
              lambda: [[a.topic, a.partition, o, rid] for o, rid in a.records])
    else:
        r["acks1_committed"] = r.get("acks1_committed", 0) + len(a.records)


def _writes(r: dict[str, Any], a: Action) -> None:
    if isinstance(a, ProduceRefused):
        name = _name(a.topic, a.partition)
        r["refused"][name] = r["refused"].get(name, 0) + 1
    elif isinstance(a, ProduceAccepted) and a.acks is Acks.NONE:
        r["acked"]["0"] += len(a.record_ids)
    elif isinstance(a, RecordsAcknowledged):
        r["acked"][_ACKS[a.acks]] += len(a.records)


def _keep(r: dict[str, Any], name: str, n: int, rows: Callable[[], list[list[Any]]]) -> None:
    """Append the rows while under ``LIMIT`` (built only then: this runs per write)."""
    room = LIMIT - len(r[name])
    if n > room:
        r["capped"] = True
    if room > 0:
        r[name].extend(rows()[:room])


def _forget_committed(state: ClusterState, r: dict[str, Any]) -> None:
    """acks=1 records below their set's HW are committed: no cut can lose them any more,
    so only their count is kept (the list holds the writes still at risk)."""
    sets, kept, view = state.replica_sets, [], state.steady.view
    for row in r["acks1"]:
        rs = sets.get((row[0], row[1]))
        if not _committed(rs if rs is None else view(rs), row[2], row[3]):
            kept.append(row)
    r["acks1_committed"] = r.get("acks1_committed", 0) + len(r["acks1"]) - len(kept)
    r["acks1"] = kept


def _committed(rs: Any, offset: int, record: int) -> bool:
    """Below HW on the leader's log (a deposed leader's record at that offset is not)."""
    if rs is None or rs.leader is None or offset >= rs.hw:
        return False
    leader = rs.replica[rs.leader]
    return leader.start <= offset < leader.leo and leader.at(offset) == record


def _leaders(r: dict[str, Any], a: LeaderChanged, at: int) -> None:
    name, since = _name(a.topic, a.partition), r["leaderless_since"]
    if a.new is None:
        since.setdefault(name, at)
    elif name in since:
        r["leaderless_ms"][name] = r["leaderless_ms"].get(name, 0) + at - since.pop(name)


def report(state: ClusterState, now: int) -> dict[str, Any] | None:
    """What the latest rehearsal kept and lost; None before the first cut."""
    r = state.rehearsal
    if r is None:
        return None
    if "settled" in r:
        return r["settled"]
    lost = {row[4]: row for row in r["truncated"]}
    acks1 = {row[3]: row for row in r["acks1"]}
    truncated_acked = [{"topic": t, "partition": p, "offset": o, "record": rid,
                        "spu": lost[rid][2]} for t, p, o, rid in acks1.values() if rid in lost]
    leaderless = dict(r["leaderless_ms"])
    for name, since in r["leaderless_since"].items():
        leaderless[name] = leaderless.get(name, 0) + now - since
    return {"started_ms": r["started_ms"], "healed_ms": r["healed_ms"], "cuts": r["cuts"],
            "settled": not active(state),
            "acknowledged_kept": {"acks_1": len(acks1) - len(truncated_acked)
                                  + r.get("acks1_committed", 0),
                                  "acks_all": r["acked"]["all"]},
            "acknowledged": dict(r["acked"]),
            # By acks level; acknowledged["1"] plus simulated["1"] is what /metrics's
            # records_produced{acks="1"} grew by during the rehearsal.
            "simulated": {level: r.get("simulated", {}).get(level, 0)
                          for level in ("0", "1", "all")},
            "acks1_truncated": truncated_acked,
            "acks1_truncated_count": len(truncated_acked),
            "unacknowledged_lost": len([rid for rid in lost if rid not in acks1]),
            "truncated": [{"topic": t, "partition": p, "spu": s, "offset": o, "record": rid}
                          for t, p, s, o, rid in lost.values()],
            "truncated_count": len(lost),
            "leaderless_ms": leaderless, "still_leaderless": sorted(r["leaderless_since"]),
            "refused": dict(r["refused"]), "refused_total": sum(r["refused"].values()),
            "capped": r["capped"], "counts_complete": not r.get("partial", False)}
