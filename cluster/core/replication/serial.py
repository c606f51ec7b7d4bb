"""Plain-dict (JSON-able) forms of every state object, event and action.

The shell keeps hot state in Redis: one cluster dict, or one dict per replica
set (``replica_set_to_dict``) plus ``cluster_meta_to_dict``. Events and actions
carry a "type" key so they can cross Celery as task arguments.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from . import events as ev
from .state import (Acks, ClusterState, Cut, MovePhase, Reassignment, Replica,
                    ReplicaSet, Resolution, TopicConfig)

FORMAT_VERSION = 1


def replica_to_dict(r: Replica) -> dict[str, Any]:
    return {"spu": r.spu, "log": list(r.log), "hw": r.hw,
            "claims_leadership": r.claims_leadership, "seen_attempt": r.seen_attempt,
            "caught_up_ms": r.caught_up_ms, "start": r.start}


def replica_from_dict(d: dict[str, Any]) -> Replica:
    # Dicts written before log starts existed hold every offset from 0.
    return Replica(int(d["spu"]), [int(x) for x in d["log"]], int(d["hw"]),
                   bool(d["claims_leadership"]), int(d["seen_attempt"]), d["caught_up_ms"],
                   int(d.get("start", 0)))


def replica_set_to_dict(rs: ReplicaSet) -> dict[str, Any]:
    """A set in the steady index as ``Steady.view`` gives it (``cluster_to_dict``)."""
    return {"topic": rs.topic, "partition": rs.partition, "replicas": list(rs.replicas),
            "leader": rs.leader, "lrs": list(rs.lrs), "resolution": rs.resolution.value,
            "hw": rs.hw, "epoch": rs.epoch, "candidate": rs.candidate,
            "attempt": rs.attempt, "tried": list(rs.tried),
            "pending": [list(p) for p in rs.pending],
            "replica_state": [replica_to_dict(rs.replica[s]) for s in rs.replicas],
            "move": None if rs.move is None else move_to_dict(rs.move),
            "deadline_ms": rs.deadline_ms,
            "deposed": [[s, e] for s, e in sorted(rs.deposed.items())],
            "unaware": [[s, e] for s, e in sorted(rs.unaware.items())]}


def move_to_dict(m: Reassignment) -> dict[str, Any]:
    d = dataclasses.asdict(m)
    d["phase"] = m.phase.value
    return d


def move_from_dict(d: dict[str, Any]) -> Reassignment:
    return Reassignment(
        [int(s) for s in d["original"]], [int(s) for s in d["target"]],
        bool(d["elect_preferred"]), d["timeout_ms"], d["started_ms"], d["stalled_ms"],
        bool(d["rolling_back"]), str(d["reason"]), MovePhase(d["phase"]),
        [int(s) for s in d["caught_up"]])


def replica_set_from_dict(d: dict[str, Any]) -> ReplicaSet:
    replicas = {r.spu: r for r in map(replica_from_dict, d["replica_state"])}
    move = d.get("move")
    return ReplicaSet(
        d["topic"], int(d["partition"]), [int(s) for s in d["replicas"]], replicas,
        d["leader"], [int(s) for s in d["lrs"]], Resolution(d["resolution"]),
        int(d["hw"]), int(d["epoch"]), d["candidate"], int(d["attempt"]),
        [int(s) for s in d["tried"]], [(int(o), int(i)) for o, i in d["pending"]],
        None if move is None else move_from_dict(move), d.get("deadline_ms"),
        {int(s): int(e) for s, e in d.get("deposed", ())},
        {int(s): int(e) for s, e in d.get("unaware", ())})


def topic_to_dict(t: TopicConfig) -> dict[str, Any]:
    return dataclasses.asdict(t)


# TopicConfig's fields, in order.
TOPIC_FIELDS = tuple(f.name for f in dataclasses.fields(TopicConfig))


def cluster_meta_to_dict(state: ClusterState, *, connections: bool = True,
                         topics: bool = True) -> dict[str, Any]:
    """Everything but the replica sets (without the connections or the topics, for a
    caller that encodes them apart: ``topics`` false leaves them out)."""
    meta: dict[str, Any] = {
        "version": FORMAT_VERSION,
        "spus": [{"id": s, "online": up} for s, up in sorted(state.spus.items())]}
    if topics:
        meta["topics"] = [topic_to_dict(t) for t in state.topics.values()]
    meta.update({"next_record_id": state.next_record_id,
                 "election_timeout_ms": state.election_timeout_ms,
                 "cuts": [cut_to_dict(c) for c in state.cuts],
                 "next_cut_id": state.next_cut_id,
                 "expired": [[s, at] for s, at in sorted(state.expired.items())],
                 "rehearsal": state.rehearsal})
    if connections:
        meta["connections"] = sorted([list(c) for c in state.connections])
    return meta


def cut_to_dict(c: Cut) -> dict[str, Any]:
    return {"id": c.id, "kind": c.kind, "spus": list(c.spus), "peers": list(c.peers),
            "one_way": c.one_way, "racks": list(c.racks), "since_ms": c.since_ms,
            "inbound": c.inbound}


def cut_from_dict(d: dict[str, Any]) -> Cut:
    return Cut(int(d["id"]), str(d["kind"]), tuple(int(s) for s in d["spus"]),
               tuple(int(s) for s in d["peers"]), bool(d["one_way"]),
               tuple(str(r) for r in d["racks"]), int(d["since_ms"]),
               bool(d.get("inbound", False)))


def cluster_to_dict(state: ClusterState) -> dict[str, Any]:
    d = cluster_meta_to_dict(state)
    # A steady set through the index's view: its followers' logs, HW and clocks.
    view = state.steady.view
    d["replica_sets"] = [replica_set_to_dict(view(rs)) for rs in state.replica_sets.values()]
    return d


def cluster_from_dict(d: dict[str, Any]) -> ClusterState:
    if d.get("version") != FORMAT_VERSION:
        raise ValueError(f"unsupported replication state version {d.get('version')!r}")
    state = ClusterState(
        spus={int(s["id"]): bool(s["online"]) for s in d["spus"]},
        topics={t["name"]: TopicConfig(**t) for t in d["topics"]},
        next_record_id=int(d["next_record_id"]),
        election_timeout_ms=int(d["election_timeout_ms"]),
        connections={(int(a), int(b)) for a, b in d["connections"]},
        cuts=[cut_from_dict(c) for c in d.get("cuts", ())],
        next_cut_id=int(d.get("next_cut_id", 1)),
        expired={int(s): int(at) for s, at in d.get("expired", ())},
        rehearsal=d.get("rehearsal"))
    for rsd in d.get("replica_sets", ()):
        rs = replica_set_from_dict(rsd)
        state.replica_sets[rs.key] = rs
    state.reindex()
    return state


_MESSAGES = {cls.__name__: cls for cls in (
    ev.ProduceRequest, ev.FollowerFetch, ev.ReplicationTick, ev.SpuOffline, ev.SpuOnline,
    ev.PromotionSucceeded, ev.PromotionFailed, ev.TimerFired, ev.ReconcileElections,
    ev.ProduceAccepted, ev.ProduceRefused, ev.RecordsAcknowledged, ev.AckFailed,
    ev.ResolutionChanged, ev.LeaderChanged, ev.LrsChanged, ev.NotifyCandidate,
    ev.StartElectionTimer, ev.ReplicaTruncated, ev.ReassignPartition,
    ev.CancelReassignment, ev.ElectPreferredLeaders, ev.RebalanceLeaders,
    ev.ElectUncleanLeader, ev.MoveStarted, ev.ReplicasChanged, ev.MoveProgressed,
    ev.MoveCompleted, ev.MoveRolledBack, ev.UncleanLeaderElected)}


def _plain(value: Any) -> Any:
    if isinstance(value, Acks):
        return "all" if value is Acks.ALL else int(value)
    if isinstance(value, (Resolution, MovePhase)):
        return value.value
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def message_to_dict(msg: ev.Event | ev.Action) -> dict[str, Any]:
    """An event or action as {"type": ClassName, field: value, ...}."""
    d = {f.name: _plain(getattr(msg, f.name)) for f in dataclasses.fields(msg)}
    d["type"] = type(msg).__name__
    return d


def _typed(cls: type, name: str, value: Any) -> Any:
    if name == "acks":
        return Acks.parse(value)
    if cls is ev.ResolutionChanged and name in ("old", "new"):
        return Resolution(value)
    if name == "phase":
        return MovePhase(value)
    if isinstance(value, list):
        return tuple(tuple(v) if isinstance(v, list) else v for v in value)
    return value


def message_from_dict(d: dict[str, Any]) -> ev.Event | ev.Action:
    cls = _MESSAGES[d["type"]]
    return cls(**{f.name: _typed(cls, f.name, d[f.name])
                  for f in dataclasses.fields(cls) if f.name in d})
