"""Carrying a stored plan out: the rules, without the store (Cruise Control's executor).

An execution is pending until applied, then running; paused stops new moves
(those in flight finish); cancelled stops new moves and asks the replication
core to roll back those in flight (it finishes forward where a rollback would
cost LRS members). A running execution ends done when every move reached its
target, failed when some rolled back or could not start. Applying is refused
when the plan's "current" layout is no longer the cluster's, or when a target
names an SPU that is not registered and online (``preparation_steps`` says how
to make it ready).

Beside Cruise Control's move counts, a byte-rate throttle (Kafka's
``--throttle``) paces the copies with a token bucket (``within_byte_rate``);
``copy_rate`` and ``eta_s`` give the pace and the estimated finish, and
``rollback_reassignment`` the file that undoes a plan.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Any, NamedTuple

Layout = Mapping[str, Sequence[Sequence[int]]]  # topic -> replica lists by partition


class ExecutionState(str, Enum):
    PENDING = "pending"
    RUNNING = "running"
    PAUSED = "paused"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


# Which request may follow which state (pause, resume, cancel).
PAUSABLE = frozenset({ExecutionState.RUNNING})
RESUMABLE = frozenset({ExecutionState.PAUSED})
CANCELLABLE = frozenset({ExecutionState.RUNNING, ExecutionState.PAUSED})


class PlanMove(NamedTuple):
    """One stored move of a plan, as the executor reads it."""
    index: int
    topic: str
    partition: int
    before: tuple[int, ...]
    after: tuple[int, ...]

    @property
    def added(self) -> tuple[int, ...]:
        return tuple(s for s in self.after if s not in self.before)


def plan_moves(moves: Iterable[Mapping[str, Any]]) -> list[PlanMove]:
    return [PlanMove(i, str(m["topic"]), int(m["partition"]), tuple(m["before"]),
                     tuple(m["after"])) for i, m in enumerate(moves)]


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


class Finished(NamedTuple):
    """An in-flight move that ended: reached its target, or went back."""
    move: PlanMove
    reached: bool


def finished_move(move: PlanMove, replicas: Sequence[int] | None, moving: bool) -> Finished | None:
    """None while the partition's move is still in flight."""
    if moving:
        return None
    return Finished(move, replicas is not None and tuple(replicas) == move.after)


def final_state(state: ExecutionState, *, total: int, started: int, in_flight: int,
                failed: int) -> ExecutionState | None:
    """The state an execution ends in once nothing is left to do, else None."""
    if in_flight:
        return None
    if state is ExecutionState.RUNNING and started >= total:
        return ExecutionState.FAILED if failed else ExecutionState.DONE
    return None


# ---- the byte-rate throttle (Kafka's --throttle, Cruise Control's replication throttle) ----

# The bucket holds at most this many seconds of the rate: an idle spell buys one burst, no more.
BURST_S = 1.0


class ByteBucket(NamedTuple):
    """Bytes a plan may still start copying, as of ``at_ms``; negative while a move overdraws."""
    tokens: float
    at_ms: int


def full_bucket(rate: int, at_ms: int) -> ByteBucket:
    return ByteBucket(rate * BURST_S, at_ms)


def refill(bucket: ByteBucket, rate: int, now_ms: int) -> ByteBucket:
    gained = rate * max(0, now_ms - bucket.at_ms) / 1000
    return ByteBucket(min(rate * BURST_S, bucket.tokens + gained), max(now_ms, bucket.at_ms))


def within_byte_rate(sizes: Sequence[int], bucket: ByteBucket,
                     rate: int | None) -> tuple[int, ByteBucket]:
    """How many of the moves of ``sizes`` (bytes each copies), in order, may start now, and
    the bucket they leave. A move starts when the bucket holds its bytes, or holds a full
    burst: a move larger than a burst then overdraws, and the next ones wait for the debt
    to be paid, so the bytes started never run ahead of the rate by more than a burst and
    one move. Unthrottled (``rate`` None) every move may start."""
    if rate is None:
        return len(sizes), bucket
    tokens, started = bucket.tokens, 0
    for size in sizes:
        if tokens < 0 or tokens < min(size, rate * BURST_S):
            break
        tokens -= size
        started += 1
    return started, ByteBucket(tokens, bucket.at_ms)


def copy_rate(copied: int, elapsed_s: float | None) -> float | None:
    """Bytes per second copied so far (None before anything could be measured)."""
    if not elapsed_s or elapsed_s <= 0:
        return None
    return round(copied / elapsed_s, 1)


def eta_s(*, moves_done: int, moves_total: int, elapsed_s: float | None,
          bytes_left: int | None = None, rate: int | None = None) -> float | None:
    """Seconds a running execution still needs at its pace so far; the byte throttle
    bounds it from below (what is left cannot copy faster than the rate)."""
    guesses = []
    if moves_done and elapsed_s and elapsed_s > 0:
        guesses.append(elapsed_s * (moves_total - moves_done) / moves_done)
    if rate and bytes_left:
        guesses.append(bytes_left / rate)
    return round(max(guesses), 1) if guesses else None


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
