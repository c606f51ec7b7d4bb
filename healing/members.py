"""The detector's memory between runs of which SPUs were LRS members of which partition.

A run finds the replicas that left an LRS since the last one (healing/core/detect.py,
``new_shrinks``) from the members that run saw, kept in their own row (``LrsMembers``). At
100,000 partitions that is 300,000 pairs: decoding them at every check and sorting them
again to see whether they changed cost a worker about a second every five. So each
process keeps the set it last read or wrote by the config row's ``in_lrs_version``, and
the pairs are written (under a new version) only when the members changed.

**Written as what changed.** While an outage or a plan's moves run, the members change at
every check, and packing and writing all 300,000 pairs was 0.2 s of a 0.3-0.5 s run (a
5 MB value). The row holds a base (``packed``) and what changed since it (``changes``:
the pairs added and the pairs removed); a run that changed some
writes those two lists again, as they now stand against the base, and the base only once
they pass an eighth of the members (``overlaid.rebase_due``), when writing the whole is worth
it.

A version is drawn at random, not counted: a write whose transaction rolled back after
this process kept its members then names nothing another run could write.
"""
from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import msgpack

from cluster.ports import store_namespace
from healing import core
from healing.core import InLrs, LrsChange, PartitionView, Snapshot, overlaid
from healing.models import HealingConfig, LrsMembers
from healing.snapshot import derived

Pairs = frozenset[overlaid.Pair]


@dataclass(frozen=True)
class Kept:
    """A version's members, and how they differ from the row's base: what its next write of
    the changes starts from."""
    version: int
    members: InLrs
    added: Pairs
    removed: Pairs

    def base_size(self) -> int:
        """How many members the row's base holds (none: the next write makes one)."""
        return len(self.members) - len(self.added) + len(self.removed)


# By store: the members of the version this process last read or wrote.
_kept: dict[str, Kept] = {}


def last_seen(row: HealingConfig) -> InLrs:
    """The members the last run saw (``row``: the config row, naming their version)."""
    kept = _kept.get(store_namespace())
    if kept is not None and kept.version == row.in_lrs_version:
        return kept.members
    stored = LrsMembers.objects.filter(pk=LrsMembers.SINGLETON).values_list(
        "version", "packed", "changes").first() or (0, b"", b"")
    added, removed = changes_unpacked(bytes(stored[2]))
    members = (unpacked(bytes(stored[1])) - removed) | added
    _keep(Kept(stored[0], members, added, removed))
    return members


class Derived(NamedTuple):
    """The members of a snapshot's rows (``now``), and, when brought up to date from those
    of the rows before the patches since (``before``), the change between the two."""
    now: InLrs
    change: LrsChange | None = None
    before: InLrs | None = None


def members_now(snapshot: Snapshot, seen: InLrs) -> tuple[InLrs, LrsChange]:
    """The members of ``snapshot``'s rows, and how they changed since ``seen`` (what the last
    run saw): from the rows that moved since the last run derived them, when that run's
    members are ``seen``, else by comparing every pair (540,000 at 180,000 partitions:
    those passes were most of a check while a plan ran)."""
    found = derived(snapshot, "in_lrs", (), lambda: Derived(core.in_lrs(snapshot)), _moved)
    if found.now is seen:
        return seen, (frozenset(), frozenset())
    if found.change is not None and found.before is seen:
        return found.now, found.change
    return found.now, (seen - found.now, found.now - seen)


def _moved(value: Derived, moved: Iterable[tuple[PartitionView, PartitionView]]) -> Derived:
    change = core.lrs_changed(moved)
    return Derived(core.in_lrs_changed(value.now, change), change, value.now)


def remember(row: HealingConfig, seen: InLrs, now: InLrs, change: LrsChange,
             fields: list[str]) -> None:
    """Write the members ``now`` if they differ from ``seen`` (what ``last_seen`` gave this
    run; ``change``: the pairs that left and those that joined since): what changed since
    the base, or a new base, under a new version that ``row`` (the config row, its field
    added to ``fields``) is to name. The caller's transaction writes both."""
    if not change[0] and not change[1]:
        return
    kept = _kept.get(store_namespace())
    version = row.in_lrs_version = secrets.randbits(62)
    fields.append("in_lrs_version")
    # What changed since the base, when ``seen`` is what this process kept (a caller that
    # did not ask ``last_seen`` leaves no base known to build on) and there is a base.
    since = (overlaid.apart(kept.added, kept.removed, *map(frozenset, change))
             if kept is not None and kept.members is seen and kept.base_size() else None)
    if since is None or overlaid.rebase_due(sum(map(len, since)), len(now)):
        _write(version=version, packed=packed(now), changes=b"")
        _keep(Kept(version, now, frozenset(), frozenset()))
        return
    added, removed = since
    _write(version=version, changes=msgpack.packb([list(added), list(removed)]))
    _keep(Kept(version, now, added, removed))


def _write(**columns: object) -> None:
    """These columns of the members' row (made if missing), the others left unread."""
    if not LrsMembers.objects.filter(pk=LrsMembers.SINGLETON).update(**columns):
        LrsMembers.objects.create(pk=LrsMembers.SINGLETON, **columns)


def packed(members: InLrs) -> bytes:
    """The members as one msgpack array of (topic, partition, SPU) arrays, in no order: they
    are read back into a set. As JSON, 300,000 took 0.3 s to encode at each run that found
    them changed (every run of an outage or a plan's moves); msgpack packs them in C."""
    return msgpack.packb(list(members))


def unpacked(data: bytes) -> InLrs:
    if not data:  # (no base written yet: every member is among the changes)
        return frozenset()
    return frozenset(map(tuple, msgpack.unpackb(data)))  # type: ignore[arg-type]


def changes_unpacked(data: bytes) -> tuple[Pairs, Pairs]:
    """The pairs added to the base and removed from it (none when ``data`` is empty)."""
    if not data:
        return frozenset(), frozenset()
    added, removed = msgpack.unpackb(data)
    return (frozenset(map(tuple, added)),  # type: ignore[arg-type]
            frozenset(map(tuple, removed)))  # type: ignore[arg-type]


def _keep(kept: Kept) -> None:
    _kept.clear()  # one store per process in practice; tests switch between several
    _kept[store_namespace()] = kept
