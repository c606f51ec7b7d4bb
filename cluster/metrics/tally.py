"""What one replication step changed, as counter increments (no Django, no Redis).

Field names are the keys of the Redis hash that ``counters.py`` keeps; the
collector turns them back into labelled series.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from cluster.core.replication import Action, ProduceResult, ResolutionChanged
from cluster.core.replication.state import Acks, Resolution

LRS_SHRINKS = "lrs_shrinks"
LRS_EXPANDS = "lrs_expands"
ELECTIONS = "elections:"
PRODUCED = "produced:"
REFUSED = "refused:"
ELECTED = "elected"
NO_CANDIDATE = "no_candidate"
ACKS_LABELS = {Acks.NONE: "0", Acks.LEADER: "1", Acks.ALL: "all"}
_ELECTING = (Resolution.ELECTION, Resolution.CANDIDATE_FOUND)


def lrs_moves(moves: Iterable[tuple[Sequence[int], Sequence[int]]]) -> Counter[str]:
    """One shrink per partition that lost LRS members, one expand per one that gained."""
    out: Counter[str] = Counter()
    for before, after in moves:
        old, new = set(before), set(after)
        out[LRS_SHRINKS] += bool(old - new)
        out[LRS_EXPANDS] += bool(new - old)
    return +out


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
