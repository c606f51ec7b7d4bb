"""The replica sets this process last committed, decoded, so its next unit of work need
not decode them again, nor, when nobody else wrote a set since, even read them.

A busy tick changes every set, and decoding 10,000 of them was a sixth of its CPU.
A kept set is its decoding but for what the encoding leaves out on purpose: a
caught-up follower's clock (set_codec.encode_set), which the kept set holds as the
core left it, so lag time counts from the follower's last caught-up fetch, as the
core alone would count it (a decoded set counts from the next step, a tick later).

Redis stays the truth, and there are two ways to know a kept set is still what Redis
holds:
* **The sets' generation.** Every save of replica sets (hot_state.save, save_sets)
  writes a fresh random token, in its fenced transaction, to the generation key of
  every lease it holds (``generation_key``: the whole state's, or a shard's; a save
  under the whole state's lease moves every shard's too). Only a holder of a lease
  writes the sets it guards, so a lease whose generation is still
  the token of this process's last save under it guards no set that anyone else
  wrote since. An image of the sets under some leases (its ``scope``) that was exact
  then (``Image.token``) still is, and a unit of work under the same leases takes it
  whole: no read of 10,000 encodings, no pass over them (a quarter of a busy tick).
* **The bytes.** Otherwise a load fetches every encoding it needs, and takes a set
  from here only when the fetched bytes are the very bytes this process committed (so
  a set another worker or shard wrote since is decoded as before).

* **The saves' notes.** A save of a few sets (at most ``NOTED_SETS``) also notes, in its
  fenced transaction and for each lease it loaded under, which sets it wrote between which
  two generations (``noted_key``: the last ``NOTED_SAVES`` saves). A complete load whose
  image's token is not the store's follows those notes from its token to the store's;
  when every lease's notes lead there, it takes the image whole but for the sets they
  name, and reads only those (set_loading.take_after_others). So one produce from the web
  costs the next tick one set, not a read and a comparison of every set's bytes. Spread
  over several servers, a lease's notes live beside its generation, on its server.

Entries are *taken* (removed) by the load that uses them and put back only once a
unit of work has committed and projected: a step that fails half-way, or a save
refused because the lease was lost, leaves nothing here that the step may have changed.

Readers (pages, consume) never use this: they decode their own copy.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cluster.adapters.hot_types import HotState, Known, Stored
from cluster.adapters.meta_json import MetaParts
from cluster.adapters.set_codec import Summary
from cluster.adapters.steady_codec import figures_of
from cluster.core.replication import Key, ReplicaSet
from cluster.core.replication.compaction import reference_replica
from cluster.core.replication.steady import Steady

# Beyond this many sets (several stores in one test process, say) the cache starts over.
# At 400,000 a process stepping 1,000,000 partitions whole (or the shards of a worker
# holding more than 400,000) started over after every unit, and each tick read and decoded
# every set again: 37 s a tick at 1,000,000 in one process.
MAX_SETS = 2_000_000
# (store namespace, the lock keys of the leases held): the images are kept by both.
Scope = tuple[str, tuple[str, ...]]


# A save notes the sets it wrote when they are this few (a produce, a command, a quiet
# tick); a larger one notes nothing, and a load behind it reads every set.
NOTED_SETS = 500
# A holder of every lease, sharded, notes for each shard the sets it wrote there when they
# are this few at most (an SPU's sets: 1,500 a shard at 100,000 partitions over 4 shards).
NOTED_SETS_BY_SHARD = 5000
# How many saves' notes each lease keeps (newest first).
NOTED_SAVES = 32


def generation_key(lock_key: str) -> str:
    """The key each save of sets under the lease ``lock_key`` writes a fresh token to."""
    return f"{lock_key}:sets-gen"


def noted_key(lock_key: str) -> str:
    """The list of the last saves' notes under the lease ``lock_key`` (``note``)."""
    return f"{lock_key}:sets-gen:notes"


def note(before: str, after: str, keys: Sequence[Key]) -> str:
    """A save's note: it moved the generation from ``before`` to ``after``, writing ``keys``."""
    return json.dumps([before, after, keys])


def written_since(notes: Sequence[Sequence[bytes | str]], since: str, now: str
                  ) -> set[Key] | None:
    """The sets written from generation ``since`` to ``now``, by the notes of each lease of
    a scope (each list newest first); None unless every lease's notes lead from one to the
    other, each step a note (a save that noted nothing breaks the way)."""
    written: set[Key] = set()
    for kept in notes:
        steps = {}
        for raw in kept:
            before, after, keys = json.loads(raw)
            steps[before] = (after, keys)
        at = since
        for _ in range(len(steps)):  # a way longer than the notes would be a loop
            if at == now:
                break
            step = steps.get(at)
            if step is None:
                return None
            at, keys = step
            written.update((topic, partition) for topic, partition in keys)
        if at != now:
            return None
    return written


@dataclass
class Image:
    """One store's sets under some leases as this process last committed them, by set
    key: the decoded set, its encoding, its summary and what its records key holds."""
    sets: dict[Key, ReplicaSet] = field(default_factory=dict)
    raw: dict[Key, Any] = field(default_factory=dict)  # HotState.raw's
    summaries: dict[Key, "Summary"] = field(default_factory=dict)
    stored: dict[Key, "Stored"] = field(default_factory=dict)
    # The store's generation when these were exactly the store's sets (None: not known
    # to be; each set is then checked by its bytes).
    token: str | None = None
    topics: frozenset[str] = frozenset()
    # Which of the sets are steady (core.replication.steady): a whole image's go with it to
    # the unit that takes it, so its fetch round and save skip them again.
    steady: Steady = field(default_factory=Steady)
    # The sets whose status a row may hold, with their entries' heads (HotState.rowed).
    rowed: dict[Key, bytes] = field(default_factory=dict)

    def pop(self, key: Key) -> tuple[bytes, ReplicaSet, Summary, Stored] | None:
        rs = self.sets.pop(key, None)
        if rs is None:
            return None
        self.steady.leave(rs)  # taken alone by a unit that may change it
        return (self.raw.pop(key), rs, self.summaries.pop(key), self.stored.pop(key))

    def pop_rowed(self, key: Key) -> bytes | None:
        return self.rowed.pop(key, None) if self.rowed else None

    def size(self) -> int:
        return len(self.sets)


class SetCache:
    """The images this process keeps, by scope: the engine's own (cluster/engine/engine.py,
    ``Engine.sets``), handed to the unit of work's load and keep, so a process that starts
    afresh (or a test that builds another engine) starts with none."""

    def __init__(self) -> None:
        self.images: dict[Scope, Image] = {}
        # The meta's JSON text of its large parts, reused while they are equal: a load
        # that takes this cache hands it to the save (HotState.meta_parts).
        self.meta = MetaParts()

    def trusted(self, scope: Scope, generation: str | None) -> bool:
        """Whether this process's image under ``scope`` is exactly the store's sets at
        ``generation`` (the token every lease of the scope holds, None if they differ)."""
        image = self.images.get(scope)
        return image is not None and generation is not None and image.token == generation

    def take_all(self, scope: Scope, generation: str | None, *,
                 topics: Iterable[str] | None = None,
                 keys: Iterable[Key] | None = None) -> Image | None:
        """The whole image, if it is exactly the store's sets at ``generation`` and those the
        load reads: no topic outside ``topics`` (the meta's table, which a full load reads
        sets of), or exactly ``keys`` (a shard's); removed from here."""
        if not self.trusted(scope, generation):
            return None
        image = self.images[scope]
        if topics is not None and not image.topics <= set(topics):
            return None
        if keys is not None and image.sets.keys() != set(keys):
            return None
        return self.images.pop(scope)

    def take(self, scope: Scope, set_key: Key, data: bytes, head: bytes | None = None
             ) -> tuple[tuple[ReplicaSet, Summary, Stored] | None, Known | None]:
        """The set committed as ``data`` by this process, if it is that one; else what this
        process last knew of its records, if anything. Either way, removed from here.
        (The encoding names the count and last id of the records kept apart, so equal bytes
        mean the records are the ones committed too.) ``head``: the head of the row entry
        the fetch read ``data`` from (status_rows.overlay), None when it read the field."""
        image = self.images.get(scope)
        kept = image.pop(set_key) if image is not None else None
        if kept is None:
            return None, None
        if kept[0] != data and not (type(kept[0]) is tuple and head == kept[0][6]
                                    and figures_of(data) == kept[0][:6]):
            # (Committed as figures, status_rows.py: known by them, read from the very row
            # entry it committed, anchored to the very field. Another writer's status in
            # the field (a move started, a leader elected: its figures may well be the
            # same) is read anew.)
            # Another worker ran this set since (a shard task lands on any worker): the load
            # fetches only the records appended after these, not the whole retained run.
            start, count, _ = kept[3]
            # The run its records key held (the log's ids after it were the status's own).
            known = reference_replica(kept[1]).log[:count]
            return None, Known(start, known) if count else None
        return (kept[1], kept[2], kept[3]), None

    @classmethod
    def holding(cls, scope: Scope, image: Image) -> SetCache:
        """A cache of ``image`` alone (a load's sets set apart to be taken by their bytes)."""
        cache = cls()
        cache.images[scope] = image
        return cache

    def keys(self, scope: Scope) -> set[Key]:
        """The keys of the sets the image under ``scope`` holds (none if no image)."""
        image = self.images.get(scope)
        return set(image.sets) if image is not None else set()

    def token(self, scope: Scope) -> str | None:
        """The generation at which the image under ``scope`` was exact (None: none was)."""
        image = self.images.get(scope)
        return image.token if image is not None else None

    def take_index(self, scope: Scope) -> Steady:
        """The steady index of the image under ``scope`` (an empty one if none), moved out
        of it: a complete load that takes the image's sets by their bytes keeps the steady
        ones steady (set_loading.adopt), with their encodings' templates."""
        image = self.images.get(scope)
        if image is None:
            return Steady()
        index, image.steady = image.steady, Steady()
        return index

    def restore_rest(self, scope: Scope, index: Steady) -> None:
        """The sets of the image under ``scope`` that a complete load did not take, out of
        ``index`` (the image's, moved to the load by ``take_index``) and whole again: a
        steady set's followers are the index's to keep (core.replication.steady), and one
        left in the image without it would be handed out as it stands by a later ``take``."""
        image = self.images.get(scope)
        if image is not None and index.keys:
            for key in [k for k in image.sets if k in index.keys]:
                index.leave_key(image.sets, key)

    def take_behind(self, scope: Scope, topics: Iterable[str]) -> Image | None:
        """The whole image, whatever its token, if it names no topic outside ``topics``
        (set_loading.take_after_others checks the saves since); removed from here."""
        image = self.images.get(scope)
        if image is None or image.token is None or not image.topics <= set(topics):
            return None
        return self.images.pop(scope)

    def take_trusted(self, scope: Scope, set_key: Key
                     ) -> tuple[tuple[bytes, ReplicaSet, Summary, Stored], bytes | None] | None:
        """A set of a trusted image (``trusted``), without its bytes fetched, with its
        field's anchor if a row may hold it; removed from here."""
        image = self.images.get(scope)
        kept = image.pop(set_key) if image is not None else None
        if kept is None or image is None:
            return None
        return kept, image.pop_rowed(set_key)

    def keep(self, scope: Scope, hot: HotState) -> None:
        """After a commit and its projections: remember every set of ``hot`` as committed.

        ``hot.generation`` is the token its save wrote; ``hot.exact`` says whether every set
        this process keeps under the scope then equals the store's (a complete load read
        them all; a trusted load's image was exact and only this process wrote since)."""
        if hot.complete and self._whole(scope, hot):
            return
        if not hot.complete and hot.state.steady.keys:
            # Kept without the unit's index: its steady sets whole first (a steady set's
            # followers are the index's to keep, core.replication.steady).
            hot.state.steady.leave_all(hot.state.replica_sets)
        image = self.images.get(scope)
        if image is None or hot.complete:  # a complete unit's sets replace what was kept
            # With its steady index: a steady set's clocks are the index's (a set not kept
            # drops out of it at the next round, by count).
            image = self.images[scope] = Image(
                topics=frozenset(hot.topics),
                steady=hot.state.steady if hot.complete else Steady())
        # An image known exact stays so when this unit's sets were exact too.
        exact = hot.exact and image.token is not None
        raw, before, after, stored = hot.raw, hot.before, hot.after, hot.stored
        rowed = hot.rowed
        # Another object under a key (a topic made again, a set this unit made): the image's
        # index must not keep the old one's followers or template, which a complete unit
        # taking the set by its bytes would save it with. (A complete unit's is its own.)
        drop = image.steady.drop if not hot.complete else None
        for key, rs in hot.state.replica_sets.items():
            if drop is not None:
                drop(key)
            data, summary, on_disk = raw.get(key), after.get(key) or before.get(key), stored.get(key)
            if data is not None and summary is not None and on_disk is not None:
                image.sets[key], image.raw[key] = rs, data
                image.summaries[key], image.stored[key] = summary, on_disk
                anchored = rowed.get(key)
                if anchored is not None:
                    image.rowed[key] = anchored
                else:
                    image.rowed.pop(key, None)
            else:
                exact = False
                image.rowed.pop(key, None)
        image.topics = image.topics | frozenset(hot.topics)
        image.token = hot.generation if exact else None
        self._bound_size()

    def _whole(self, scope: Scope, hot: HotState) -> bool:
        """Keep a complete unit's sets as the image as they stand, without a pass over them
        (their summaries: as loaded, then as saved); False if some set lacks a part."""
        n = len(hot.state.replica_sets)
        summaries = hot.after
        if len(summaries) != n:  # a busy tick saved every set: nothing to merge
            summaries = hot.before
            summaries.update(hot.after)
        if not len(hot.raw) == len(hot.stored) == len(summaries) == n:
            return False
        self.images[scope] = Image(hot.state.replica_sets, hot.raw, summaries, hot.stored,
                                   hot.generation if hot.exact else None,
                                   frozenset(hot.topics), hot.state.steady, hot.rowed)
        self._bound_size()
        return True

    def _bound_size(self) -> None:
        if sum(image.size() for image in self.images.values()) > MAX_SETS:
            self.images.clear()

    def clear(self) -> None:
        self.images.clear()
