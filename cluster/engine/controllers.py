"""The engine's SPU and topic controllers (issue 32): they react to the operator intents'
offsets in the metadata log, not to rereading every SPU and topic row each tick.

Every intent append sets the log's intents head (``metadata_log.intents_head``, in the
script that appends it). The hot state's meta keeps what the engine adopted
(``HotState.adopted``: ``offset``, the intents head it folded up to; ``compared``, the
tick time of its last full comparison; ``checked``, the Redis run then), saved in the unit's fenced write, so a refused
save adopts nothing and the next tick folds the same entries again. A tick then:

* head equal to the adopted offset: reads no SPU or topic row at all;
* head above it: makes sure the store applied the entries (``catch_up``: a command that
  died between its append and its catch-up), folds the intent entries between the two
  (cluster/core/replication/controllers.py: one pure reducer per object kind) into the
  same reconcile steps the full comparison uses (engine/spu_loops.py), reading only the
  rows of a topic provisioned since (its partitions' ids), and records the head;
* the full comparison with every row (``sync_topology``) instead on the first tick after
  a fresh meta or a Redis restart, when the log no longer holds the entries (trimmed, or a Redis that lost
  its log), and every ``REPLICATION_TOPOLOGY_COMPARE_S`` of tick time: rows written
  without an entry (Redis down at the command; a test writing rows straight to the
  store) are adopted then, as the resync heal catches partition rows.
"""
from __future__ import annotations

from enum import Enum

from django.conf import settings

from cluster.adapters import metadata_log
from cluster.adapters.hot_state import HotState
from cluster.core.replication import Action
from cluster.core.replication.controllers import (SpuSpec, fold_spus, fold_topics,
                                                  is_intent, needs_replica_sets,
                                                  only_topics_changed)
from cluster.engine.spu_loops import (OFFLINE, ONLINE, apply_settings, drop_topic,
                                     provisioned_topics, reconcile_spus, reconcile_topics,
                                     sync_racks, sync_topology, topics_changed_in_rows)
from cluster.projections import store as store_projection

Entries = list[dict]
_BATCH = 5000


class Topology(Enum):
    """What a sharded coordinator's quiet tick found the intents ask (``topology_quiet``)."""
    QUIET = "quiet"  # adopted by the quiet tick itself: no replica set touched
    # Topics added or dropped, and no other set touched (``adopt_topics``).
    TOPICS = "topics added or dropped"
    WHOLE = "whole"  # a whole tick must adopt it


def adopt_topology(hot: HotState, at: int) -> list[Action]:
    """A whole tick's: what the intents since the adopted offset changed, or the full
    comparison when it is due."""
    head = metadata_log.intents_head()
    entries = None if _compare_due(hot, head, at) else _pending(hot, head)
    if entries is None:
        store_projection.catch_up()  # an entry logged first has its rows once applied
        actions = sync_topology(hot)
        _adopt(hot, head, compared=at)
        return actions
    actions = _fold(hot, entries) if entries else []
    _adopt(hot, head)
    return actions


def topology_quiet(hot: HotState, at: int) -> Topology:
    """A sharded coordinator's quiet tick, which holds no replica set: adopt what needs
    none (racks, topic settings) and say QUIET; TOPICS when the intents ask for topics
    added or dropped and nothing else of the sets; WHOLE when a whole tick must adopt the
    rest (an SPU registered, forgotten or changing status; a topic made again)."""
    return _without_other_sets(hot, at, make_sets=False)[0]


def adopt_topics(hot: HotState, at: int) -> list[Action] | None:
    """Under every lease with no set loaded: make the sets of the topics the intents added
    since the adopted offset and drop those of the topics they deleted, with the racks and
    settings beside them, and record the head. None when by now they ask anything else of
    the replica sets, or nothing (a whole tick must adopt it).

    A dropped topic's sets are deleted by its name (the save deletes its keys, whatever
    the unit loaded): a topic deleted cost a whole tick, every set loaded, stepped and
    saved in one process.

    A topic added at a few hundred thousand partitions cost a whole tick: every set loaded
    in one process (20 s at 300,000 here), with no shard stepping meanwhile. The new sets
    read nothing of the others (core.replication.topology.add_topic: the SPUs' statuses
    and the replica index), so they are made alone, and each shard's next tick reads only
    the new sets it holds."""
    topology, actions = _without_other_sets(hot, at, make_sets=True)
    return actions if topology is Topology.TOPICS else None


def _without_other_sets(hot: HotState, at: int, *, make_sets: bool
                        ) -> tuple[Topology, list[Action]]:
    """What the intents since the adopted offset ask, or the periodic comparison with the
    rows finds, adopted where no loaded set is needed: the racks and settings, and when
    ``make_sets`` (a unit of every lease) the new topics' sets and the dropped ones'
    deletion. Nothing is adopted when the answer is WHOLE, nor TOPICS without
    ``make_sets``."""
    head = metadata_log.intents_head()
    compared = None
    dropped: dict[str, int | None] = {}
    if _compare_due(hot, head, at):
        store_projection.catch_up()
        changed = topics_changed_in_rows(hot)  # the settings of the others applied
        if changed is None:
            return Topology.WHOLE, []
        added, dropped = changed[0], dict(changed[1])
        compared = at
    else:
        entries = _pending(hot, head)
        if entries is None:
            return Topology.WHOLE, []
        added = set()
        if entries:
            registered = _registered(hot)
            spec, topics = fold_spus(registered, entries), fold_topics(entries)
            if needs_replica_sets(registered, spec, topics):
                # A name the engine replicates already is a re-creation: dropped first.
                if (not only_topics_changed(registered, spec, topics)
                        or topics.added & hot.topics.keys()):
                    return Topology.WHOLE, []
                added, dropped = topics.added, topics.dropped
            _adopt_meta(hot, spec, topics.settings)
    if not added and not dropped:
        _adopt(hot, head, compared=compared)
        return Topology.QUIET, []
    if not make_sets:
        return Topology.TOPICS, []
    for name, pk in dropped.items():
        drop_topic(hot, name, pk)
    actions = reconcile_topics(hot, provisioned_topics(added), added) if added else []
    _adopt(hot, head, compared=compared)
    return Topology.TOPICS, actions


def _adopt_meta(hot: HotState, spec: SpuSpec, changed: dict[str, dict]) -> None:
    """What the intents changed that no replica set holds: racks, topic settings."""
    sync_racks(hot, {str(s): rack for s, rack in spec.racks.items()})
    for name, values in changed.items():
        if name in hot.state.topics:
            apply_settings(hot, name, values)


def _compare_due(hot: HotState, head: int, at: int) -> bool:
    offset, compared = hot.adopted.get("offset"), hot.adopted.get("compared")
    if offset is None or compared is None or head < offset:
        return True  # a fresh meta, or a log begun again: nothing to fold from
    seen = hot.adopted.get("checked")
    if seen is not None and seen != hot.checked:
        # Redis restarted since the last comparison (the recovery check noted the new run):
        # what it lost of the log since its last snapshot, the rows still say.
        return True
    # Tick time going back (a test's clock, a restored state) compares too.
    return not 0 <= at - compared < settings.REPLICATION_TOPOLOGY_COMPARE_S * 1000


def _adopt(hot: HotState, head: int, compared: int | None = None) -> None:
    """Record the intents head as adopted (saved with the unit's fenced write)."""
    adopted = {**hot.adopted, "offset": head}
    if compared is not None:
        adopted.update(compared=compared, checked=hot.checked)
    elif adopted.get("checked") is None:
        # Compared on a fresh meta, before the recovery check noted this Redis run.
        adopted["checked"] = hot.checked
    hot.adopted = adopted


def _pending(hot: HotState, head: int) -> Entries | None:
    """The intent entries after the adopted offset up to ``head``, once the store applied
    them; None when the log no longer holds them all (a full comparison must do)."""
    first = hot.adopted["offset"] + 1
    if head < first:
        return []
    if metadata_log.start() > first:
        return None
    store_projection.catch_up()
    out: Entries = []
    while first <= head:
        batch = metadata_log.read(first, _BATCH, last=head)
        out += [e.data for e in batch if is_intent(e.data)]
        if len(batch) < _BATCH:
            break
        first = batch[-1].offset + 1
    return out


def _registered(hot: HotState) -> SpuSpec:
    """The registered SPUs as the engine holds them (``hot.racks`` names every one)."""
    racks = {int(s): rack for s, rack in hot.racks.items()}
    return SpuSpec(racks, {s: bool(hot.state.spus.get(s)) for s in racks})


def _fold(hot: HotState, entries: Entries) -> list[Action]:
    """The SPU controller, then the topic controller (as the full comparison orders them:
    a topic's replicas name registered SPUs)."""
    actions: list[Action] = []
    registered = _registered(hot)
    spec = fold_spus(registered, entries)
    if spec != registered:
        actions += reconcile_spus(
            hot, {s: ONLINE if up else OFFLINE for s, up in spec.online.items()},
            {str(s): rack for s, rack in sorted(spec.racks.items())})
    topics = fold_topics(entries)
    for name, pk in topics.dropped.items():
        drop_topic(hot, name, pk)
    if topics.added:
        actions += reconcile_topics(hot, provisioned_topics(topics.added), topics.added)
    for name, changed in topics.settings.items():
        if name in hot.state.topics:
            apply_settings(hot, name, changed)
    return actions
