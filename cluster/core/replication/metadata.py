"""Metadata-log entries: what a step changed, as KRaft's ``__cluster_metadata`` records it.

The shell appends these in the same fenced write as the state they describe;
the store, the event page and replay are built from them. A ``partition``
entry carries the partition's whole status (replicas, leader, LRS,
resolution, leader epoch), so applying one twice, or only the latest of
several, gives the same row. HW and LEO advance every tick and are not
entries: an unclean election's lower HW is (``unclean-election``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from .events import (Action, MoveCompleted, MoveProgressed, MoveRolledBack, MoveStarted,
                     ReplicaTruncated, ResolutionChanged, StartElectionTimer,
                     UncleanLeaderElected)
from .state import ClusterState, Key, ReplicaSet, Resolution

Entry = dict[str, Any]


class Status(NamedTuple):
    """The part of a replica set the log records: a change of any field is an entry."""
    replicas: tuple[int, ...]
    leader: int | None
    lrs: tuple[int, ...]
    resolution: Resolution
    epoch: int


def status_of(rs: ReplicaSet) -> Status:
    return Status(tuple(rs.replicas), rs.leader, tuple(rs.lrs), rs.resolution, rs.epoch)


def status_fields(status: Status) -> dict[str, Any]:
    return {"replicas": list(status.replicas), "leader": status.leader,
            "lrs": list(status.lrs), "resolution": status.resolution.value,
            "epoch": status.epoch}


def partition_entry(key: Key, old: Status | None, new: Status, reason: str) -> Entry:
    """The partition's status after the step, and which fields moved (for the event page)."""
    changed = {} if old is None else {
        name: {"from": _plain(a), "to": _plain(b)}
        for name, a, b in zip(Status._fields, old, new) if a != b}
    return {"type": "partition", "topic": key[0], "partition": key[1],
            **status_fields(new), "changed": changed, "reason": reason}


def topic_entry(topic: str, sets: Iterable[ReplicaSet]) -> Entry:
    """A topic the engine starts replicating, with every partition's first status."""
    return {"type": "topic-replicated", "topic": topic,
            "statuses": [_status_row(status_of(rs)) for rs in sets]}


def _status_row(s: Status) -> list[Any]:
    return [list(s.replicas), s.leader, list(s.lrs), s.resolution.value, s.epoch]


def status_from_row(row: list[Any]) -> Status:
    replicas, leader, lrs, resolution, epoch = row
    return Status(tuple(replicas), leader, tuple(lrs), Resolution(resolution), epoch)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value.value if isinstance(value, Resolution) else value


def reasons(actions: Iterable[Action]) -> dict[Key, str]:
    return {(a.topic, a.partition): a.reason for a in actions if isinstance(a, ResolutionChanged)}


def action_entries(state: ClusterState, actions: Iterable[Action]) -> list[Entry]:
    """Entries for what a status cannot say: election deadlines, records given up, moves.

    Found by the action's kind in one lookup (``_ENTRIES``): most actions of a step are of
    kinds no entry is made of (a new topic's three a partition)."""
    out: list[Entry] = []
    for a in actions:
        made = _ENTRIES.get(type(a))
        if made is not None:
            kind, fields = made(state, a)
            out.append({"type": kind, "topic": getattr(a, "topic", None),
                        "partition": getattr(a, "partition", None), **fields})
    return out


def _election(state: ClusterState, a: StartElectionTimer) -> tuple[str, dict[str, Any]]:
    rs = state.replica_sets.get((a.topic, a.partition))
    deadline = rs.deadline_ms if rs is not None and rs.attempt == a.attempt else None
    return "election", {"candidate": a.candidate, "attempt": a.attempt,
                        "deadline_ms": deadline}


def _unclean(_: ClusterState, a: UncleanLeaderElected) -> tuple[str, dict[str, Any]]:
    return "unclean-election", {"spu": a.spu, "old_hw": a.old_hw, "new_hw": a.new_hw,
                                "offsets_lost": a.offsets_lost, "forced": a.forced,
                                "given_up": [a.new_hw, a.old_hw]}


def _truncation(_: ClusterState, a: ReplicaTruncated) -> tuple[str, dict[str, Any]]:
    return "truncation", {"spu": a.spu, "from": a.old_leo, "to": a.new_leo,
                          "reason": a.reason, "records": list(a.records)}


def _move_start(_: ClusterState, a: MoveStarted) -> tuple[str, dict[str, Any]]:
    return "move-start", {"original": list(a.original), "target": list(a.target)}


def _move_progress(_: ClusterState, a: MoveProgressed) -> tuple[str, dict[str, Any]]:
    return "move-progress", {"phase": a.phase.value, "caught_up": list(a.caught_up),
                             "records_copied": a.records_copied,
                             "records_total": a.records_total}


def _move_complete(_: ClusterState, a: MoveCompleted) -> tuple[str, dict[str, Any]]:
    return "move-complete", {"replicas": list(a.replicas), "leader": a.leader}


def _move_rollback(_: ClusterState, a: MoveRolledBack) -> tuple[str, dict[str, Any]]:
    return "move-rollback", {"replicas": list(a.replicas), "reason": a.reason}


# The kinds of action an entry is made of, and how.
_ENTRIES: dict[type, Callable[[ClusterState, Any], tuple[str, dict[str, Any]]]] = {
    StartElectionTimer: _election, UncleanLeaderElected: _unclean,
    ReplicaTruncated: _truncation, MoveStarted: _move_start, MoveProgressed: _move_progress,
    MoveCompleted: _move_complete, MoveRolledBack: _move_rollback,
}


def fold(statuses: dict[Key, Status], entry: Entry) -> None:
    """Replay: apply one entry to a map of partition statuses (what the store rows hold)."""
    kind = entry["type"]
    if kind == "partition":
        statuses[(entry["topic"], entry["partition"])] = Status(
            tuple(entry["replicas"]), entry["leader"], tuple(entry["lrs"]),
            Resolution(entry["resolution"]), entry["epoch"])
    elif kind == "topic-replicated":
        for index, row in enumerate(entry["statuses"]):
            statuses[(entry["topic"], index)] = status_from_row(row)
    elif kind == "topic-dropped":
        for k in [k for k in statuses if k[0] == entry["topic"]]:
            del statuses[k]
