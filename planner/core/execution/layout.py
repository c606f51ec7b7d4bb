"""Whether a plan still fits the cluster, what makes its targets ready, and its undo file."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from planner.core.execution.moves import PlanMove

Layout = Mapping[str, Sequence[Sequence[int]]]  # topic -> replica lists by partition


def layout_of(current: Mapping[str, Any]) -> dict[str, list[list[int]]]:
    """A plan's "current" (planner serial form) as topic -> replica lists."""
    return {t["name"]: [list(p["replicas"]) for p in sorted(t["partitions"], key=lambda p: p["id"])]
            for t in current.get("topics", ())}


def layout_drift(planned: Layout, actual: Layout) -> list[str]:
    """Where the cluster no longer has the layout the plan started from."""
    problems = []
    for topic, replica_lists in sorted(planned.items()):
        now = actual.get(topic)
        if now is None:
            problems.append(f"topic {topic} no longer exists")
            continue
        changed = [p for p, reps in enumerate(replica_lists)
                   if p >= len(now) or list(now[p]) != list(reps)]
        if changed or len(now) != len(replica_lists):
            shown = ", ".join(f"{topic}/{p}" for p in changed[:5]) or f"{topic} partition count"
            problems.append(f"{shown} changed since the plan was made")
    return problems


class NotReady(NamedTuple):
    """Target SPUs that cannot take replicas yet: to register, and to bring online."""
    unregistered: list[int]
    offline: list[int]


def targets_not_ready(moves: Sequence[PlanMove], registered: Iterable[int],
                      online: Iterable[int]) -> NotReady:
    named = sorted({s for m in moves for s in m.after})
    known, up = set(registered), set(online)
    return NotReady([s for s in named if s not in known],
                    [s for s in named if s in known and s not in up])


def unavailable_targets(moves: Sequence[PlanMove], registered: Iterable[int],
                        online: Iterable[int]) -> list[str]:
    """Target SPUs that are not registered, or registered but not online."""
    missing, down = targets_not_ready(moves, registered, online)
    return ([f"SPU {s} is not registered" for s in missing]
            + [f"SPU {s} is not online" for s in down])


def preparation_steps(ready: NotReady, racks: Mapping[int, str | None]) -> list[str]:
    """The commands that make a plan's targets ready: register (in the plan's rack), then
    bring online, each SPU; empty when every target is ready."""
    register = [f"spu register --id {s}" + (f" --rack {racks[s]}" if racks.get(s) else "")
                for s in ready.unregistered]
    return register + [f"spu online {s}" for s in (*ready.unregistered, *ready.offline)]


def rollback_reassignment(moves: Sequence[PlanMove], current: Layout) -> dict[str, Any]:
    """Today's assignment of the partitions a plan moves, as Kafka reassignment JSON:
    what ``kafka-reassign-partitions --execute`` prints to save for a rollback (with
    ``log_dirs`` "any"). ``current`` is the cluster's layout now; a partition it lacks
    falls back to the plan's "before"."""
    rows = []
    for move in sorted(moves, key=lambda m: (m.topic, m.partition)):
        now = current.get(move.topic) or ()
        replicas = list(now[move.partition]) if move.partition < len(now) else list(move.before)
        rows.append({"topic": move.topic, "partition": move.partition, "replicas": replicas,
                     "log_dirs": ["any"] * len(replicas)})
    return {"version": 1, "partitions": rows}
