"""What one replication step changed, as counter increments (no Django, no Redis).

Field names are the keys of the Redis hash that ``counters.py`` keeps; the
collector turns them back into labelled series.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from cluster.core.replication import (Action, Key, LrsChanged, MoveCompleted, MoveProgressed,
                                      MoveRolledBack, MoveStarted, ProduceResult,
                                      ResolutionChanged)
from cluster.core.replication.state import Acks, Resolution

LRS_SHRINKS = "lrs_shrinks"
LRS_EXPANDS = "lrs_expands"
ELECTIONS = "elections:"
MOVES = "moves:"
PRODUCED = "produced:"
REFUSED = "refused:"
ELECTED = "elected"
NO_CANDIDATE = "no_candidate"
ACKS_LABELS = {Acks.NONE: "0", Acks.LEADER: "1", Acks.ALL: "all"}
_ELECTING = (Resolution.ELECTION, Resolution.CANDIDATE_FOUND)
MOVE_STEPS = {MoveStarted: "started", MoveProgressed: "progressed", MoveCompleted: "completed",
              MoveRolledBack: "rolled_back"}


def lrs_chains(actions: Iterable[Action],
               moved: Mapping[Key, tuple[Sequence[int], Sequence[int]]]
               ) -> list[list[Sequence[int]]]:
    """Each partition's LRS through one step: where it started, every ``LrsChanged``, where
    it ended.

    ``moved`` holds (start, end) for the partitions whose LRS differs across the
    step; any other partition ended where it started, which its last
    ``LrsChanged`` then tells.
    """
    changes: dict[Key, list[Sequence[int]]] = {}
    for a in actions:
        if isinstance(a, LrsChanged):
            changes.setdefault((a.topic, a.partition), []).append(a.lrs)
    chains = []
    for key in [*changes, *(k for k in moved if k not in changes)]:
        lrs = changes.get(key, [])
        start, end = moved.get(key) or (lrs[-1], lrs[-1])
        chain = [start, *lrs]
        if set(chain[-1]) != set(end):
            chain.append(end)  # a change no LrsChanged announced still counts
        chains.append(chain)
    return chains


def lrs_moves(chains: Iterable[Sequence[Sequence[int]]]) -> Counter[str]:
    """A shrink each time a partition's LRS lost members, an expand each time it gained:
    a shrink and re-expand inside one step counts both, as Kafka counts its ISR changes."""
    out: Counter[str] = Counter()
    for chain in chains:
        for before, after in zip(chain, chain[1:]):
            if before == after:  # a new topic's every partition: no move, no sets built
                continue
            old, new = set(before), set(after)
            out[LRS_SHRINKS] += bool(old - new)
            out[LRS_EXPANDS] += bool(new - old)
    return +out


def move_steps(actions: Iterable[Action]) -> Counter[str]:
    """Replica moves started, changing phase, completed and rolled back."""
    return Counter(MOVES + MOVE_STEPS[type(a)] for a in actions if type(a) in MOVE_STEPS)


def election_outcomes(actions: Iterable[Action]) -> Counter[str]:
    """An election ends when a candidate is installed or when no LRS member is left to ask."""
    out: Counter[str] = Counter()
    for a in actions:
        if not isinstance(a, ResolutionChanged) or a.old not in _ELECTING:
            continue
        if a.new is Resolution.ONLINE:
            out[ELECTIONS + ELECTED] += 1
        elif a.new is Resolution.OFFLINE:
            out[ELECTIONS + NO_CANDIDATE] += 1
    return out


def produce_result(result: ProduceResult, acks: Acks, count: int) -> Counter[str]:
    """Records accepted by acks level, or refused by the core's error code."""
    if result.accepted:
        return Counter({PRODUCED + ACKS_LABELS[acks]: count})
    return Counter({REFUSED + (result.code or "UNKNOWN"): count})


def produce_outcome(state: str, acks_label: str, code: str | None, count: int) -> Counter[str]:
    """The shell's view of a produce call: refused (by the core or the shell) or written."""
    if state == "refused":
        return Counter({REFUSED + (code or "UNKNOWN"): count})
    return Counter({PRODUCED + acks_label: count})
