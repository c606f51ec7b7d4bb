"""A set of LRS members kept as a base and what changed since it (``Overlaid``).

The detector brings the members up to date at every run from the partitions that moved
(detect.in_lrs_changed). As a frozenset, each run copied all of them to change a few:
``(members - left) | joined`` was 68 ms of a run at 180,000 partitions (540,000 pairs)
while a plan's moves ran, every run. An ``Overlaid`` shares its base with the one it was
made from and holds only the pairs added to it and removed from it, so a run costs what
moved; once those pass an eighth of the base (``REBASE_SHARE``) they are folded into a new
base, once, as the members' row does with its own base (healing/members.py).

Immutable, like the frozenset it stands for: a run keeps the members it saw by identity.
It compares, subtracts and iterates as any set (``collections.abc.Set``).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Set
from itertools import chain
from typing import Any

Pair = tuple[str, int, int]  # (topic, partition, SPU)

# Folded into a new base once the pairs changed since it pass this share of it.
REBASE_SHARE = 8
REBASE_AT_LEAST = 1000


class Overlaid(Set[Pair]):
    """``(base - removed) | added``, with ``removed`` in ``base`` and ``added`` not."""

    __slots__ = ("base", "added", "removed")

    def __init__(self, base: frozenset[Pair], added: frozenset[Pair] = frozenset(),
                 removed: frozenset[Pair] = frozenset()) -> None:
        self.base, self.added, self.removed = base, added, removed

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> frozenset[Any]:
        return frozenset(it)  # what the set operations of the mixin give back

    def __contains__(self, pair: object) -> bool:
        if pair in self.added:
            return True
        return pair in self.base and pair not in self.removed

    def __len__(self) -> int:
        return len(self.base) - len(self.removed) + len(self.added)

    def __iter__(self) -> Iterator[Pair]:
        base: Iterable[Pair] = self.base - self.removed if self.removed else self.base
        return chain(base, self.added)

    def __repr__(self) -> str:
        return (f"Overlaid({len(self.base)} pairs, +{len(self.added)}, "
                f"-{len(self.removed)})")


def changed(members: Set[Pair], left: frozenset[Pair], joined: frozenset[Pair]
            ) -> Set[Pair]:
    """``(members - left) | joined`` (``left`` and ``joined`` apart: detect.lrs_changed),
    in time proportional to them and to what ``members`` changed since its base."""
    if not left and not joined:
        return members
    if not isinstance(members, Overlaid):
        members = Overlaid(frozenset(members))
    base = members.base
    added, removed = apart(members.added, members.removed, left, joined)
    if rebase_due(len(added) + len(removed), len(base)):
        return frozenset((base - removed) | added)
    return Overlaid(base, added, removed)


def apart(added: frozenset[Pair], removed: frozenset[Pair], left: frozenset[Pair],
          joined: frozenset[Pair]) -> tuple[frozenset[Pair], frozenset[Pair]]:
    """The pairs added to a base and removed from it, once ``left`` left the set they make
    and ``joined`` joined it: a pair that joins back is in the base again, and one that
    leaves having been added never was. (The members' row keeps its changes so too.)"""
    return (added - left) | (joined - removed), (removed - joined) | (left - added)


def rebase_due(apart_count: int, base_size: int) -> bool:
    """Whether the pairs apart from a base are many enough to fold into a new one."""
    return apart_count > max(REBASE_AT_LEAST, base_size // REBASE_SHARE)
