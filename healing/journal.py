"""What a detection run logs: its events (an anomaly's new state, a plan made), as entries
of the metadata log, appended through one unit of work of the engine once the run's rows
committed (issue 32: healing logs through a unit, not a database transaction wrapped in
the engine's lease).

Before, the run's whole database transaction ran inside a unit of work, holding the
engine's lease (and so every tick) while it wrote, and its ``log_event`` calls became
entries through the unit's ambient collector. Now the run writes its rows in its own
transaction, with no lease, keeping its events here; ``log`` then appends them to the log
as an operator's intent is appended (above what the store applied, under no lease: they
are no engine state), and the store's projection writes their event rows with their
offsets. Appended through a unit, they waited for the engine's lease: during a whole
tick (an SPU changing status at 120,000 partitions, 7-10 s) the worker sat idle. A Redis
that refuses the append, or a process that dies after the rows committed, loses the
events, not the rows.
"""
from __future__ import annotations

from typing import Any

from cluster import ports


class Journal:
    """The events of one run, in order, until ``log`` appends them."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def event(self, actor: str, object_type: str, object_name: object, operation: str,
              params: dict[str, Any] | None = None, result: str = "") -> None:
        """An event row, as an entry (``services/events.log_event``'s fields)."""
        self.entries.append({"type": "event", "actor": actor, "object_type": object_type,
                             "object_name": str(object_name), "operation": operation,
                             "params": params or {}, "result": result})

    def log(self) -> None:
        """Append the events to the log now, as an operator's intent is appended (none when
        there are none): they are no engine state, so they wait for no lease."""
        if not self.entries:
            return
        ports.append_entries(self.entries)
        self.entries.clear()
