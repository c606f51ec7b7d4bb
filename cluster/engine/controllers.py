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

from collections.abc import Iterable
from enum import Enum
from typing import Any, NamedTuple

from django.conf import settings

from cluster.adapters import metadata_log
from cluster.adapters.hot_state import HotState
from cluster.core.replication import Action, Key
from cluster.core.replication.controllers import (SPU_KINDS, TOPIC_KINDS, AloneChanges,
                                                  adoptable_alone, alone_until, fold_spus,
                                                  fold_topics, is_intent, needs_replica_sets)
from cluster.engine.spu_loops import (OFFLINE, ONLINE, apply_rows, apply_settings,
                                     changed_in_rows, drop_topic, provisioned_topics,
                                     reconcile_spus, reconcile_topics, registered_spus,
                                     sync_racks, sync_topology)
from cluster.projections import store as store_projection

Entries = list[dict]
_BATCH = 5000


class Topology(Enum):
    """What a sharded coordinator's quiet tick found the intents ask (``topology_quiet``)."""
    QUIET = "quiet"  # adopted by the quiet tick itself: no replica set touched
    # SPUs registered, forgotten or changing status, topics added or dropped, and nothing
    # else asked of the sets: adopted under every lease with only the changing SPUs' sets
    # loaded (``adopt_alone``).
    ALONE = "their sets alone"
    # A whole tick must adopt it (a topic made under a name the engine replicates, no
    # deletion before it: one made again is dropped by one unit and made by the next).
    WHOLE = "whole"


class Found(NamedTuple):
    """The quiet tick's answer, and for ALONE the SPUs whose sets the next unit loads: those
    the intents change the status of, and those the connection manager finds silent. With
    QUIET, ``sets``: the replica sets the tick steps reached for (a running plan's), which
    a unit of their own loads before the quiet tick runs without the steps."""
    topology: Topology
    spus: frozenset[int] = frozenset()
    silent: frozenset[int] = frozenset()
    sets: frozenset[Key] = frozenset()


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
    actions = _fold(hot, [e.data for e in entries]) if entries else []
    _adopt(hot, head)
    return actions


def topology_quiet(hot: HotState, at: int) -> Found:
    """A sharded coordinator's quiet tick, which holds no replica set: adopt what needs
    none (racks, topic settings) and say QUIET; ALONE, with the SPUs registered, forgotten
    or changing status, when the intents ask that and topics added or dropped and nothing
    else of the sets; WHOLE when a whole tick must adopt the rest (another SPU's change
    logged meanwhile; a topic made under a name the engine replicates and no deletion
    before it). A topic deleted and made again is dropped by one such unit and made by
    the next (``_alone_part``)."""
    topology, alone, _ = _without_other_sets(hot, at, loaded=None)
    return Found(topology, frozenset(alone.spus) if alone is not None else frozenset())


def adopt_alone(hot: HotState, at: int, spus: Iterable[int]) -> list[Action] | None:
    """Under every lease with only the sets of the SPUs ``spus`` loaded (every set with a
    replica on one of them): adopt those SPUs registered, forgotten or changing status
    (the engine's reconcile, ``reconcile_spus``), make the sets of the
    topics the intents added since the adopted offset and drop those of the topics they
    deleted, with the racks and settings beside them, and record the head. None when by
    now they ask more of the replica sets (another SPU's change, whose sets are not
    loaded): a whole tick must adopt it.

    An SPU going offline or coming back cost a whole tick: every set loaded, stepped and
    saved in one process (7.8-10.2 s of CPU at 120,000 partitions, with no shard stepping
    meanwhile), to change the 3/50 of them with a replica on it. Its reaction reaches sets
    only through ``ClusterState.sets_of`` (core.replication.controllers.adoptable_alone),
    and the sets loaded are those ``sets_of`` would find in the whole state: the unit
    decides as the whole tick does (tests/unit/.../test_alone_adoption.py compares them
    over the fault schedules).

    An SPU registered holds no set; one forgotten is dropped once no set names it, and the
    reconcile checks every SPU the state names unregistered: their sets are among
    ``spus`` (core.replication.controllers.adoptable_alone).

    A dropped topic's sets are deleted by its name (the save deletes its keys, whatever
    the unit loaded). A topic added reads nothing of the other sets
    (core.replication.topology.add_topic: the SPUs' statuses and the replica index), so
    its sets are made alone, and each shard's next tick reads only the new sets it
    holds."""
    topology, _, actions = _without_other_sets(hot, at, loaded=frozenset(spus))
    return actions if topology is not Topology.WHOLE else None


def _without_other_sets(hot: HotState, at: int, *, loaded: frozenset[int] | None
                        ) -> tuple[Topology, AloneChanges | None, list[Action]]:
    """What the intents since the adopted offset ask, or the periodic comparison with the
    rows finds, adopted where no set but the changing SPUs' is needed: the racks and
    settings, and when ``loaded`` names the SPUs whose sets the unit holds (a unit of
    every lease) the SPUs registered, forgotten or changing status, the new topics' sets
    and the dropped ones' deletion. Nothing is adopted when the answer is WHOLE, nor ALONE
    without ``loaded``."""
    head = metadata_log.intents_head()
    compared, again = None, False
    rows: dict[str, Any] = {}
    settings_changed: dict[str, dict[str, Any]] = {}
    if _compare_due(hot, head, at):
        store_projection.catch_up()
        found = changed_in_rows(hot)
        if found is None:
            return Topology.WHOLE, None, []
        alone, rows, compared = found.alone, found.kept, at
        store, racks, again = found.store, found.racks, bool(found.again)
    else:
        head, entries = _alone_part(hot, head, _pending(hot, head))
        if entries is None:
            return Topology.WHOLE, None, []
        alone, store, racks = AloneChanges(), None, None
        if entries:
            registered = registered_spus(hot)
            spec, topics = fold_spus(registered, entries), fold_topics(entries)
            settings_changed = topics.settings
            racks = {str(s): rack for s, rack in sorted(spec.racks.items())}
            if spec != registered:  # (as ``_fold``: the SPUs reconciled with the spec)
                store = {s: ONLINE if up else OFFLINE for s, up in spec.online.items()}
            if needs_replica_sets(registered, spec, topics):
                found_alone = adoptable_alone(registered, spec, topics, hot.state.spus)
                # A name the engine replicates already is a re-creation: dropped first.
                if found_alone is None or found_alone.added & hot.topics.keys():
                    return Topology.WHOLE, None, []
                alone = found_alone
    if alone and loaded is None:
        return Topology.ALONE, alone, []
    if not alone.spus <= (loaded or frozenset()):
        return Topology.WHOLE, None, []  # another SPU's change logged since: not loaded
    # As a whole tick orders them (``_fold``, ``sync_topology``): the SPUs (registered,
    # their racks, statuses), topics dropped, topics added, then the settings.
    actions: list[Action] = []
    if alone.spus and store is not None and racks is not None:
        actions += reconcile_spus(hot, store, racks)  # every SPU it reaches, loaded
    elif racks is not None:
        sync_racks(hot, racks)  # no set reached: the racks alone
    for name, pk in alone.dropped.items():
        drop_topic(hot, name, pk)
    if alone.added:
        actions += reconcile_topics(hot, provisioned_topics(alone.added), alone.added)
    apply_rows(hot, rows)
    for name, values in settings_changed.items():
        if name in hot.state.topics:
            apply_settings(hot, name, values)
    _adopt(hot, head, compared=compared, again=again)
    return (Topology.ALONE if alone else Topology.QUIET), alone, actions


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


def _adopt(hot: HotState, head: int, compared: int | None = None, *,
           again: bool = False) -> None:
    """Record the intents head as adopted (saved with the unit's fenced write); ``again``:
    the comparison adopted only part of what the rows differ by (a topic made again was
    dropped), so the next tick compares again."""
    adopted = {**hot.adopted, "offset": head}
    if compared is not None:
        adopted.update(compared=compared, checked=hot.checked)
    elif adopted.get("checked") is None:
        # Compared on a fresh meta, before the recovery check noted this Redis run.
        adopted["checked"] = hot.checked
    if again:
        adopted["compared"] = None
    hot.adopted = adopted


def _alone_part(hot: HotState, head: int, entries: list[metadata_log.Entry] | None
                ) -> tuple[int, Entries | None]:
    """The head a unit without every set adopts up to, and the intents it folds: all of
    them, or those before a topic is made again under its name (``alone_until``: the next
    tick makes it); None when that is the first of them, or the log no longer holds them
    (``_pending``: a whole tick adopts them)."""
    if entries is None:
        return head, None
    data = [e.data for e in entries]
    count = alone_until(data, hot.topics.keys())
    if count == len(entries):
        return head, data
    if count == 0:
        return head, None
    return entries[count].offset - 1, data[:count]


def _pending(hot: HotState, head: int) -> list[metadata_log.Entry] | None:
    """The intent entries after the adopted offset up to ``head``, once the store applied
    them; None when the log no longer holds them all (a full comparison must do)."""
    first = hot.adopted["offset"] + 1
    if head < first:
        return []
    if metadata_log.start() > first:
        return None
    store_projection.catch_up()
    # Only an entry whose text names an intent's type is decoded: the engine's own entries
    # between two intents (an outage's elections, the HW checkpoints) were 48,000 decoded
    # for nothing at 300,000 partitions, 1.3 s of an SPU's change.
    found = metadata_log.read_holding(first, head, _INTENT_NEEDLES, batch=_BATCH) or []
    return [e for e in found if is_intent(e.data)]


# Each intent type as its entry's JSON holds it.
_INTENT_NEEDLES = tuple(map(metadata_log.needle, sorted(SPU_KINDS | TOPIC_KINDS)))


def _fold(hot: HotState, entries: Entries) -> list[Action]:
    """The SPU controller, then the topic controller (as the full comparison orders them:
    a topic's replicas name registered SPUs)."""
    actions: list[Action] = []
    registered = registered_spus(hot)
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
