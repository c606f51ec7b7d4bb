"""The one-line calls services make so counters and JSON event lines follow their work."""
from __future__ import annotations

from collections.abc import Sequence

from cluster.core.replication import Acks, Action, ProduceResult
from cluster.metrics import counters, tally
from cluster.metrics.logs import log_events
from cluster.models import Event

__all__ = ["count_produce", "count_simulated", "count_step", "log_events"]


def count_step(actions: Sequence[Action], events: Sequence[Event]) -> None:
    """Once a step is saved in Redis: LRS moves, elections, buffered produce counts.

    The hot state is the truth the store mirrors, so a failed mirror after this
    still counts what happened.
    """
    moves = [(e.params["lrs"]["from"], e.params["lrs"]["to"]) for e in events
             if "lrs" in e.params]
    counters.flush(tally.lrs_moves(moves) + tally.election_outcomes(actions))


def count_simulated(result: ProduceResult, acks: Acks, count: int) -> None:
    """Inside a tick: held until the tick's ``count_step``."""
    counters.buffer(tally.produce_result(result, acks, count))


def count_produce(state: str, acks_label: str, code: str | None, count: int) -> None:
    """After a produce call returned to its caller (page, API, command)."""
    counters.flush(tally.produce_outcome(state, acks_label, code, count))
