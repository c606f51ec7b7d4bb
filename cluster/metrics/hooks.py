"""The one-line calls services make so counters and JSON event lines follow their work."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from cluster.core.replication import Acks, Action, Key, ProduceResult
from cluster.metrics import counters, tally
from cluster.metrics.logs import log_events

__all__ = ["count_produce", "count_simulated", "count_step", "log_events"]


def count_step(actions: Sequence[Action],
               lrs_moved: Mapping[Key, tuple[Sequence[int], Sequence[int]]]) -> None:
    """Once a step is committed: LRS moves, elections, replica moves, buffered produce counts.

    ``lrs_moved``: (LRS before, LRS after) of the partitions whose LRS the step changed,
    as the unit of work saw them; a partition with none ended the step as it began.
    """
    chains = tally.lrs_chains(actions, lrs_moved)
    counters.flush(tally.lrs_moves(chains) + tally.election_outcomes(actions)
                   + tally.move_steps(actions))


def count_simulated(result: ProduceResult, acks: Acks, count: int) -> None:
    """Inside a tick: held until the tick's ``count_step``."""
    counters.buffer(tally.produce_result(result, acks, count))


def count_produce(state: str, acks_label: str, code: str | None, count: int, *,
                  namespace: str | None = None) -> None:
    """After a produce call returned to its caller (page, API, command); ``namespace``: the
    store's, as its unit of work loaded it (else read again, redis_keys.py)."""
    counters.flush(tally.produce_outcome(state, acks_label, code, count), namespace=namespace)
