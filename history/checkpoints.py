"""HW checkpoints: the offsets a moment's replay needs, appended at a bounded rate.

HW and LEO move every tick and are no status entries. Every unit of work that
writes entries anyway, and otherwise at most one unit every
``HISTORY_HW_INTERVAL_S``, adds one ``hw`` entry with the offsets of the
partitions that moved since this process last wrote them: a moment's HW is
exact at every status change and at most one interval old in between.
"""
from __future__ import annotations

from typing import Any

from django.conf import settings

from cluster.adapters import metadata_log
from cluster.adapters.hot_state import HotState, Summary, summary
from cluster.core.replication import Key
from cluster.core.replication.history import Offsets, checkpoint_entry


class _Memory:
    """Per process: what it last wrote, the sets it saved since, and when."""

    def __init__(self) -> None:
        self.written: dict[Key, Offsets] = {}
        self.dirty: set[Key] = set()
        self.last_ms = 0
        self.head = 0
        self.stream = ""


_memory = _Memory()


def hw_checkpoint(hot: HotState, after: dict[Key, Summary], at: int,
                  writes_entries: bool) -> list[dict[str, Any]]:
    """The unit's ``hw`` entry, when one is due (installed into the unit of work)."""
    mem = _memory
    mem.dirty.update(after)
    due = writes_entries or at - mem.last_ms >= settings.HISTORY_HW_INTERVAL_S * 1000
    if not due or not mem.dirty:
        return []
    head, stream = metadata_log.head(), metadata_log.stream_key()
    if head < mem.head or stream != mem.stream:
        mem.__init__()  # another log (a new store, a Redis restart older than us): start over
        mem.dirty.update(after)
        mem.stream = stream
    changed: dict[Key, Offsets] = {}
    sets = hot.state.replica_sets
    for key in mem.dirty:
        s = after.get(key) or (summary(sets[key]) if key in sets else None)
        if s is None:
            continue
        offsets = (s.hw, s.replicas)
        if mem.written.get(key) != offsets:
            changed[key] = offsets
    # Sets of other shards stay dirty until a unit that loaded them writes them.
    mem.dirty = {k for k in mem.dirty if k not in sets}
    mem.written.update(changed)
    mem.last_ms, mem.head = at, head
    entry = checkpoint_entry(changed)
    return [] if entry is None else [{**entry, "at": at}]


def forget() -> None:
    """Tests: a fresh process's memory."""
    _memory.__init__()
