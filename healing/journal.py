"""What a detection run logs: its events (an anomaly's new state, a plan made), as entries
of the metadata log, appended through one unit of work of the engine once the run's rows
committed (issue 32: healing logs through a unit, not a database transaction wrapped in
the engine's lease).

Before, the run's whole database transaction ran inside a unit of work, holding the
engine's lease (and so every tick) while it wrote, and its ``log_event`` calls became
entries through the unit's ambient collector. Now the run writes its rows in its own
transaction, with no lease, keeping its events here; ``log`` then runs one short unit
whose block only logs them, and the store's projection writes their event rows (with
their offsets) after the commit, as for every entry. A unit refused (its lease lost) or
a process that dies after the rows committed loses the events, not the rows: the same as
before, where the rows committed inside the step, before the unit's save.
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
        """Append the events through one unit of work (none when there are none)."""
        if not self.entries:
            return
        with ports.unit(keys=[]) as u:
            for entry in self.entries:
                u.log(entry)
        self.entries.clear()
