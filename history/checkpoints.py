"""HW checkpoints: the offsets a moment's replay needs, appended at a bounded rate.

HW and LEO move every tick and are no status entries. At most once every
``HISTORY_HW_INTERVAL_S`` a unit of work adds one ``hw`` entry with the offsets
of every partition that moved since this process last wrote them; a unit that
writes status entries anyway adds those of the partitions whose status it
changed. A partition's HW is exact where its status changed and at most one
interval old elsewhere (0 s: exact everywhere, one entry per unit that moves).
"""
from __future__ import annotations

from typing import Any

from django.conf import settings

from cluster import ports
from cluster.ports import HotState, Summary
from cluster.core.replication import Key
from history.core.replay import Offsets, checkpoint_entry


class _Memory:
    """What one checkpointer last wrote, the sets saved since, and when."""

    def __init__(self) -> None:
        self.written: dict[Key, Offsets] = {}
        self.dirty: set[Key] = set()
        self.last_ms = 0
        self.head = 0
        self.stream = ""


class HwCheckpoints:
    """The engine's ``history-hw`` extra entries (composition/bootstrap.py): one per engine, so
    per process, and its memory of what it wrote is the engine's, not this module's."""

    def __init__(self) -> None:
        self.memory = _Memory()

    def __call__(self, hot: HotState, after: dict[Key, Summary], at: int,
                 writes_entries: bool) -> list[dict[str, Any]]:
        return hw_checkpoint(self.memory, hot, after, at, writes_entries)

    def forget(self) -> None:
        """A fresh process's memory."""
        self.memory = _Memory()


def hw_checkpoint(mem: _Memory, hot: HotState, after: dict[Key, Summary], at: int,
                  writes_entries: bool) -> list[dict[str, Any]]:
    """The unit's ``hw`` entry, when one is due (``mem``: what was written before).

    Every interval: every partition that moved. Between intervals, a unit that writes
    entries anyway checkpoints the partitions whose status it changed, so their HW is
    exact where the leader or LRS moved without a whole cluster's offsets each time.
    """
    # Only sets whose offsets moved in this unit: a busy tick saves every set, and a fresh
    # process (each manage.py run) wrote its own copy of every HW it saved.
    mem.dirty.update(hot.differs)
    interval_due = at - mem.last_ms >= settings.HISTORY_HW_INTERVAL_S * 1000
    if not (interval_due or writes_entries) or not mem.dirty:
        return []
    head, stream = ports.log_head(), ports.log_stream_key()
    if mem.stream and (head < mem.head or stream != mem.stream):
        mem.__init__()  # another log (a new store, a Redis restart older than us): start over
        mem.dirty.update(after)
        interval_due = True
    mem.stream = stream
    keys = mem.dirty if interval_due else hot.moved  # the unit's own status moves
    changed = _changed(hot, after, keys, mem.written)
    mem.written.update(changed)
    if interval_due:
        # Sets of other shards stay dirty until a unit that loaded them writes them.
        mem.dirty = {k for k in mem.dirty if k not in hot.state.replica_sets}
        mem.last_ms = at
    else:
        mem.dirty.difference_update(changed)
    mem.head = head
    entry = checkpoint_entry(changed)
    return [] if entry is None else [{**entry, "at": at}]


def _changed(hot: HotState, after: dict[Key, Summary], keys: Any,
             written: dict[Key, Offsets]) -> dict[Key, Offsets]:
    """The offsets of ``keys`` that differ from what this process last ``written``."""
    sets = hot.state.replica_sets
    changed: dict[Key, Offsets] = {}
    for key in keys:
        s = after.get(key) or (ports.summary(sets[key]) if key in sets else None)
        if s is None:
            continue
        offsets = (s.hw, s.replicas)
        if written.get(key) != offsets:
            changed[key] = offsets
    return changed


def forget() -> None:
    """Tests: a fresh process's memory (the engine's checkpointer's)."""
    for hook in ports.engine().extra_entries.values():
        if isinstance(hook, HwCheckpoints):
            hook.forget()
