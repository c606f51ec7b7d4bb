"""Elections driven by the state alone: notices and timers are facts in the replica set.

An election's candidate and attempt say whether its notice was answered (the
candidate's ``seen_attempt``); its ``deadline_ms`` says when the
wait-for-response timer fires. Every step of the shell runs ``run_elections``
with the time it steps at and the SPU loops that are stopped: live candidates
answer their notices, due timers fire and try the next candidate, and Offline
sets with a live LRS member start again. Nothing rides on a message, so a
process that dies between two steps delays an election by one step, never
strands it (a set CandidateFound from before deadlines existed counts as due).
"""
from __future__ import annotations

from collections.abc import Collection

from .election import (CANDIDATE_FOUND, promotion_succeeded, reconcile_elections,
                       spu_receive_notice, timer_fired)
from .events import Action, NotifyCandidate, TimerFired
from .reach import silenced
from .state import ClusterState, ReplicaSet

# Each round may move an election to its next candidate; a set has at most as many
# candidates as replicas, so a few rounds finish every election that can finish now.
MAX_ROUNDS = 8


def run_elections(state: ClusterState, now_ms: int,
                  stopped: Collection[int] = ()) -> list[Action]:
    """Answer pending notices, fire due timers, retry Offline sets; return the actions."""
    state.clock_ms = now_ms
    if state.cuts:
        # An SPU cut from the SC gets no notice or cannot report its promotion.
        stopped = {*stopped, *silenced(state)}
    actions: list[Action] = []
    for _ in range(MAX_ROUNDS):
        busy = [rs for rs in state.unsteady_sets() if rs.resolution is CANDIDATE_FOUND]
        done = _answer_notices(state, busy, stopped) + _fire_due(state, busy, now_ms)
        if not done:
            break
        actions += done
    retried = reconcile_elections(state)
    if retried:
        busy = [rs for rs in state.unsteady_sets() if rs.resolution is CANDIDATE_FOUND]
        retried += _answer_notices(state, busy, stopped)
    return actions + retried


def awaiting_answer(rs: ReplicaSet, state: ClusterState) -> bool:
    """The candidate has not seen this attempt's notice yet."""
    c = rs.replica.get(rs.candidate) if rs.candidate is not None else None
    return c is not None and state.spus.get(rs.candidate, False) and c.seen_attempt < rs.attempt


def _answer_notices(state: ClusterState, busy: list[ReplicaSet],
                    stopped: Collection[int]) -> list[Action]:
    actions: list[Action] = []
    for rs in busy:
        if rs.resolution is not CANDIDATE_FOUND or rs.candidate in stopped:
            continue  # a stopped loop answers nothing: its election waits for the timer
        if not awaiting_answer(rs, state):
            continue
        live = tuple(s for s in rs.replicas if state.spus.get(s))
        notice = NotifyCandidate(rs.topic, rs.partition, rs.candidate, rs.attempt, live)
        reply = spu_receive_notice(state, notice)
        if reply is not None:
            actions += promotion_succeeded(state, reply)
    return actions


def _fire_due(state: ClusterState, busy: list[ReplicaSet], now_ms: int) -> list[Action]:
    actions: list[Action] = []
    for rs in busy:
        if rs.resolution is not CANDIDATE_FOUND or rs.candidate is None:
            continue
        if rs.deadline_ms is None or rs.deadline_ms <= now_ms:
            actions += timer_fired(state, TimerFired(rs.topic, rs.partition,
                                                     rs.candidate, rs.attempt))
    return actions


def next_deadline(state: ClusterState) -> int | None:
    """The earliest pending election deadline (the shell asks for a step then)."""
    due = [rs.deadline_ms for rs in state.unsteady_sets()
           if rs.resolution is CANDIDATE_FOUND and rs.deadline_ms is not None]
    return min(due, default=None)
