"""What a unit of work's commit saved, as a value: what the engine's projections receive
(cluster/engine/engine.py's ``Projection``), so a projection reads what changed from the
record rather than from the unit's mutable state."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cluster.adapters.metadata_log import Entry as LogEntry
from cluster.core.replication import Action, Key


@dataclass(frozen=True)
class Committed:
    """What one unit of work's commit saved, as a value: what it did (``actions``, at
    ``at``), the sets it wrote (``saved``), those whose logged status moved (``moved``) and
    the entries it appended with their offsets (``entries``). ``meta_saved``: it saved the
    cluster meta (a shard unit does not, so what it changed of the meta is not shown)."""
    at: int
    actions: tuple[Action, ...]
    saved: tuple[Key, ...]
    moved: tuple[Key, ...]
    log: tuple[dict[str, Any], ...]
    first_offset: int | None
    meta_saved: bool

    @property
    def entries(self) -> tuple[LogEntry, ...]:
        if self.first_offset is None:
            return ()
        return tuple(LogEntry(self.first_offset + i, data) for i, data in enumerate(self.log))
