"""The demo's simulated producers: each topic with a rate appends what is due at every tick."""
from __future__ import annotations

from typing import Any

from cluster.adapters.hot_state import HotState
from cluster.core import replication as core
from cluster.core.replication import Acks, Action, ProduceRequest
from cluster.metrics.hooks import count_simulated

SIMULATED_ACKS = Acks.LEADER
# A producer that was stopped (no worker) does not make up for lost time in one burst.
MAX_CATCH_UP_MS = 5000


def simulate_producers(hot: HotState, at: int, stopped: set[int]) -> list[Action]:
    """Each topic with a producer rate appends what is due since its last run."""
    actions: list[Action] = []
    for name, table in hot.topics.items():
        rate = table.get("rate") or 0.0
        last = table.get("last_ms") or at
        due = table.get("carry", 0.0) + rate * min(at - last, MAX_CATCH_UP_MS) / 1000
        table["last_ms"], table["carry"] = (at, due - int(due)) if rate else (None, 0.0)
        if int(due):
            actions += _spread(hot, name, table, int(due), stopped)
    return actions


def _spread(hot: HotState, name: str, table: dict[str, Any], n: int,
            stopped: set[int]) -> list[Action]:
    """Round robin over partitions; a write to a leaderless partition is refused and lost."""
    parts = len(table["partitions"])
    start = table.get("next", 0)
    counts = [n // parts + (1 if (i - start) % parts < n % parts else 0) for i in range(parts)]
    table["next"] = (start + n) % parts
    actions: list[Action] = []
    for p, count in enumerate(counts):
        rs = hot.state.replica_sets.get((name, p))
        if count and rs is not None and rs.leader not in stopped:
            result = core.produce(hot.state, ProduceRequest(name, p, SIMULATED_ACKS, count))
            count_simulated(result, SIMULATED_ACKS, count)
            actions += [a for a in result.actions if not isinstance(a, core.ProduceAccepted)]
    return actions
