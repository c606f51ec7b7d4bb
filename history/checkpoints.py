"""HW checkpoints: the offsets a moment's replay needs, appended at a bounded rate.

HW and LEO move every tick and are no status entries. Once every
``HISTORY_HW_INTERVAL_S`` each partition that moved since this process last wrote it
has its offsets in a ``hw`` entry; a unit that writes status entries anyway adds those
of the partitions whose status it changed. A partition's HW is exact where its status
changed and at most one interval old elsewhere (0 s: exact everywhere, one entry per
unit that moves).

The interval is cut in ``SLOTS`` slots and each partition has one (its number modulo
``SLOTS``): the first unit in a slot writes the partitions of the slots that came since
the last, so each one's turn comes once an interval. Written all at one tick, a busy
cluster's checkpoint was 100,000 summaries compared and packed at once every five
minutes, about 1 s on top of that tick (tests/bench/bench_hw_checkpoint.py); spread, a
fiftieth of it in each slot. A fresh process, and one whose last slot is an interval or
more behind, writes every partition at its first unit, as before.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings

from cluster import ports
from cluster.ports import HotState, Summary
from cluster.core.replication import Key
from history.core.replay import Offsets, checkpoint_entry


# The interval's slots (module docstring).
SLOTS = 50


class _Memory:
    """What one checkpointer last wrote, the sets saved since, and the last slot whose
    turn it wrote (None: none yet)."""

    def __init__(self) -> None:
        self.written: dict[Key, Offsets] = {}
        self.dirty: set[Key] = set()
        self.slot: int | None = None
        self.head = 0
        self.stream = ""


class HwCheckpoints:
    """The engine's ``history-hw`` extra entries (composition/bootstrap.py): one per engine, so
    per process, and its memory of what it wrote is the engine's, not this module's."""

    def __init__(self) -> None:
        self.memory = _Memory()

    def __call__(self, hot: HotState, after: Mapping[Key, Summary], at: int,
                 writes_entries: bool) -> list[dict[str, Any]]:
        return hw_checkpoint(self.memory, hot, after, at, writes_entries)

    def forget(self) -> None:
        """A fresh process's memory."""
        self.memory = _Memory()


def hw_checkpoint(mem: _Memory, hot: HotState, after: Mapping[Key, Summary], at: int,
                  writes_entries: bool) -> list[dict[str, Any]]:
    """The unit's ``hw`` entry, when one is due (``mem``: what was written before).

    The partitions whose slot's turn came since the last unit (module docstring), of
    those that moved. Between turns, a unit that writes entries anyway checkpoints the
    partitions whose status it changed, so their HW is exact where the leader or LRS
    moved without a whole cluster's offsets each time.
    """
    # Only sets whose offsets moved in this unit: a busy tick saves every set, and a fresh
    # process (each manage.py run) wrote its own copy of every HW it saved.
    mem.dirty.update(hot.differs)
    if not ports.sets_loaded(hot):
        # The coordinator's quiet tick: no set to read offsets from. The turn is left to
        # the next unit with sets (taken here, the shards' units would skip it).
        return []
    turns = _turns(mem, at)
    if not (turns or writes_entries) or not mem.dirty:
        return []
    head, stream = ports.log_head(), ports.log_stream_key()
    if mem.stream and (head < mem.head or stream != mem.stream):
        mem.__init__()  # another log (a new store, a Redis restart older than us): start over
        mem.dirty.update(after)
        turns = _turns(mem, at)
    mem.stream = stream
    keys: Any = hot.moved  # the unit's own status moves
    if turns:
        dirty = mem.dirty
        # The turns' partitions of each topic, looked up among the dirty ones: a turn costs
        # its slots' partitions, where a pass over the dirty ones (a busy cluster's every
        # partition) cost more, over an interval, than writing them all at once.
        due = list(dirty) if len(turns) >= SLOTS else [
            k for k in ((name, p) for name, table in hot.topics.items() for slot in turns
                        for p in range(slot, len(table.get("partitions", ())), SLOTS))
            if k in dirty]
        keys = due if not hot.moved else [*due, *hot.moved]
        # Sets of other shards stay dirty until a unit that loaded them writes them.
        loaded = hot.state.replica_sets
        mem.dirty.difference_update([k for k in due if k in loaded])
    changed = _changed(hot, after, keys, mem.written)
    mem.written.update(changed)
    # The unit's own status moves are written now: not again at their slot's turn.
    mem.dirty.difference_update(hot.moved if turns else changed)
    mem.head = head
    entry = checkpoint_entry(changed)
    return [] if entry is None else [{**entry, "at": at}]


def _turns(mem: _Memory, at: int) -> frozenset[int]:
    """The slots whose turn came since the last unit's (all of them: a fresh process, an
    interval or more since, or an interval of 0), noted as taken."""
    interval_ms = settings.HISTORY_HW_INTERVAL_S * 1000
    if interval_ms <= 0:
        return _EVERY
    slot = int(at * SLOTS // interval_ms)
    last, mem.slot = mem.slot, slot
    if last is None or slot - last >= SLOTS or slot < last:
        return _EVERY
    return frozenset(s % SLOTS for s in range(last + 1, slot + 1))


_EVERY = frozenset(range(SLOTS))


def _changed(hot: HotState, after: Mapping[Key, Summary], keys: Any,
             written: dict[Key, Offsets]) -> dict[Key, Offsets]:
    """The offsets of ``keys`` that differ from what this process last ``written``."""
    sets = hot.state.replica_sets
    changed: dict[Key, Offsets] = {}
    for key in keys:
        # A steady set's followers as the index keeps them (core.replication.steady).
        s = after.get(key) or (ports.view_summary(hot, sets[key]) if key in sets else None)
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
