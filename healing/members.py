"""The detector's memory between runs of which SPUs were LRS members of which partition.

A run finds the replicas that left an LRS since the last one (healing/core/detect.py,
``new_shrinks``) from the members that run saw, kept in the config row. At 100,000
partitions that is 300,000 pairs: decoding them at every check (twice: the row was read
whole to claim the run too) and sorting them again to see whether they changed cost a
worker about a second every five. So the row is read without them, each process keeps
the set it last read or wrote by the row's ``in_lrs_version``, and the pairs are written
(under a new version) only when the members changed.

A version is drawn at random, not counted: a write whose transaction rolled back after
this process kept its members then names nothing another run could write.
"""
from __future__ import annotations

import secrets

import msgpack

from cluster.ports import store_namespace
from healing.core.detect import InLrs
from healing.models import HealingConfig

# By store: (in_lrs_version, the members that version holds).
_kept: dict[str, tuple[int, InLrs]] = {}


def last_seen(row: HealingConfig) -> InLrs:
    """The members the last run saw (``row`` may have been read without them)."""
    kept = _kept.get(store_namespace())
    if kept is not None and kept[0] == row.in_lrs_version:
        return kept[1]
    stored = HealingConfig.objects.filter(pk=row.pk).values_list(
        "in_lrs_packed", "in_lrs", "in_lrs_version").first() or (b"", [], 0)
    members = (unpacked(bytes(stored[0])) if stored[0] else
               frozenset((topic, partition, spu) for topic, partition, spu in stored[1]))
    _keep(stored[2], members)
    return members


def remember(row: HealingConfig, seen: InLrs, now: InLrs, fields: list[str]) -> None:
    """Set ``row`` to hold the members ``now`` if they differ from ``seen`` (what
    ``last_seen`` gave this run), adding the fields to write to ``fields``."""
    if now == seen:
        return
    row.in_lrs, row.in_lrs_packed = [], packed(now)
    row.in_lrs_version = secrets.randbits(62)
    fields += ["in_lrs", "in_lrs_packed", "in_lrs_version"]
    _keep(row.in_lrs_version, now)


def packed(members: InLrs) -> bytes:
    """The members as one msgpack array of (topic, partition, SPU) arrays, in no order: they
    are read back into a set. As JSON, 300,000 took 0.3 s to encode at each run that found
    them changed (every run of an outage or a plan's moves); msgpack packs them in C."""
    return msgpack.packb(list(members))


def unpacked(data: bytes) -> InLrs:
    return frozenset(map(tuple, msgpack.unpackb(data)))  # type: ignore[arg-type]


def _keep(version: int, members: InLrs) -> None:
    _kept.clear()  # one store per process in practice; tests switch between several
    _kept[store_namespace()] = (version, members)
