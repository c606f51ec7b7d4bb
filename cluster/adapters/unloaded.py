"""Replica sets a unit did not load, and the steps that reach for them.

The sharded coordinator's quiet tick loads no set, and a unit of every lease may load only
the sets it picked. A cluster-wide tick step (a running plan's) that reads a set such a
unit does not hold must not take its absence for a partition that is gone: the read
raises instead. ``NeedsSets`` names the sets reached for, so the coordinator can run the
step again in a unit of every lease with them loaded (services/replication.py); a step
that reaches for every set (iterates them) raises ``NeedsWholeState``, and the whole tick
runs it. A step names what it is about to read with ``require`` (``HotState.reads``), so
one retry loads them all rather than one a retry.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from cluster.core.replication import ClusterState, Key


class NeedsWholeState(Exception):
    """A cluster-wide step reached for replica sets the unit did not load."""


class NeedsSets(NeedsWholeState):
    """A step reached for these sets, which the unit did not load (some may not exist)."""

    def __init__(self, keys: Iterable[Key]) -> None:
        self.keys = frozenset(keys)
        super().__init__(f"{len(self.keys)} replica set(s) not loaded")


class UnloadedSets(dict):  # type: ignore[type-arg]
    """Stands in for the replica sets on the coordinator's quiet tick, which loads none: a
    read of one names it (``NeedsSets``), any pass over them asks for the whole state."""

    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise NeedsWholeState

    def _named(self, key: Any, *_: Any) -> Any:
        raise NeedsSets([key])

    def missing(self, keys: Iterable[Key]) -> set[Key]:
        return set(keys)

    __getitem__ = __contains__ = get = _named
    __iter__ = __len__ = items = values = keys = _refuse


class PickedSets(dict):  # type: ignore[type-arg]
    """The sets a unit of every lease picked, while a tick step runs on them: a read of a
    set that exists but was not picked names it (``NeedsSets``); one that does not exist is
    absent as in a whole load; any pass over them asks for the whole state."""

    def __init__(self, loaded: dict[Key, Any], exists: Callable[[Key], bool]) -> None:
        super().__init__(loaded)
        self._exists = exists

    def _absent(self, key: Key) -> None:
        if self._exists(key):
            raise NeedsSets([key])

    def __missing__(self, key: Key) -> Any:
        self._absent(key)
        raise KeyError(key)

    def get(self, key: Key, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        self._absent(key)
        return default

    def __contains__(self, key: object) -> bool:
        if dict.__contains__(self, key):
            return True
        self._absent(key)  # type: ignore[arg-type]
        return False

    def missing(self, keys: Iterable[Key]) -> set[Key]:
        """Those of ``keys`` that exist and were not picked."""
        return {k for k in keys if not dict.__contains__(self, k) and self._exists(k)}

    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise NeedsWholeState

    __iter__ = __len__ = items = values = keys = _refuse  # type: ignore[assignment]


def require(sets: dict[Key, Any], keys: Iterable[Key]) -> None:
    """Raise ``NeedsSets`` with every key of ``keys`` that ``sets`` stands in for without
    holding it; a whole load's plain dict holds every set, so nothing is raised there."""
    if isinstance(sets, (UnloadedSets, PickedSets)):
        missing = sets.missing(keys)
        if missing:
            raise NeedsSets(missing)


@contextmanager
def picked(state: ClusterState, exists: Callable[[Key], bool]) -> Iterator[None]:
    """Tick steps run on the picked sets of ``state`` with reads of others refused; after
    them the state holds a plain dict again (the commit's passes go over what was loaded),
    with any set a step added or dropped."""
    loaded = state.replica_sets
    state.replica_sets = guard = PickedSets(loaded, exists)
    try:
        yield
    finally:
        state.replica_sets = loaded
        if dict.keys(guard) != dict.keys(loaded):
            loaded.clear()
            loaded.update(dict.items(guard))
