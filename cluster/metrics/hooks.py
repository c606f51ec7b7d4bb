"""The one-line calls services make so counters and JSON event lines follow their work."""
from __future__ import annotations

from collections.abc import Sequence

from cluster.core.replication import Acks, Action, Key, ProduceResult
from cluster.metrics import counters, tally
from cluster.metrics.logs import log_events
from cluster.models import Event

__all__ = ["count_produce", "count_simulated", "count_step", "log_events"]


def count_step(actions: Sequence[Action], events: Sequence[Event]) -> None:
    """Once a step is saved in Redis: LRS moves, elections, replica moves, buffered produce
    counts.

    The hot state is the truth the store mirrors, so a failed mirror after this
    still counts what happened.
    """
    chains = tally.lrs_chains(actions, _lrs_moved(events))
    counters.flush(tally.lrs_moves(chains) + tally.election_outcomes(actions)
                   + tally.move_steps(actions))


def _lrs_moved(events: Sequence[Event]) -> dict[Key, tuple[list[int], list[int]]]:
    """(LRS before, LRS after) of the partitions whose LRS the step changed: their
    status events say so; a partition with none ended the step as it began."""
    moved: dict[Key, tuple[list[int], list[int]]] = {}
    for e in events:
        if e.operation == "status" and "lrs" in e.params:
            topic, partition = e.object_name.rsplit("/", 1)
            moved[(topic, int(partition))] = (e.params["lrs"]["from"], e.params["lrs"]["to"])
    return moved


def count_simulated(result: ProduceResult, acks: Acks, count: int) -> None:
    """Inside a tick: held until the tick's ``count_step``."""
    counters.buffer(tally.produce_result(result, acks, count))


def count_produce(state: str, acks_label: str, code: str | None, count: int) -> None:
    """After a produce call returned to its caller (page, API, command)."""
    counters.flush(tally.produce_outcome(state, acks_label, code, count))
