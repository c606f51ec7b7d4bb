"""The engine's controllers (issue 32): operator intents folded into the spec the engine
holds, one pure reducer per object kind, as Fluvio's SC runs a controller per object
kind that reacts to the change epochs of its objects instead of rereading them all.

The engine keeps the offset of the last intent it adopted. When the log's intents head
is above it, the entries between the two are folded here, in offset order, into what
the engine already holds (the SPUs registered with their racks and statuses; the
topics it replicates), and the engine applies the result with the same reconcile code
as its full comparison with the store's rows (engine/spu_loops.py). Only the objects the
entries name change; nothing else is read.

Each reducer says what the rows would say once the store applied the entries
(cluster/projections/intents.py writes them from the same fields):

* SPUs: ``spu-register`` (a new SPU starts offline, a re-registered one keeps its
  status), ``spu-unregister``, ``spu-update`` (its rack; endpoints are no engine state),
  ``spu-status`` (Online or not). An ``outage`` changes no status itself: the SPUs'
  ``spu-status`` entries follow it, and a killed loop is the killed set's.
* topics: ``topic-create`` / ``topic-provision`` of a provisioned topic (the engine
  then reads that topic's partition rows, for their ids), ``topic-delete``,
  ``topic-update`` (its settings, by model field name).
"""
from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cluster.core.replication import intents
from cluster.core.spus import SpuResolution
from cluster.core.topic_controller import TopicResolution

Entry = Mapping[str, Any]
ONLINE = SpuResolution.ONLINE.value
PROVISIONED = TopicResolution.PROVISIONED.value
SPU_KINDS = frozenset({intents.SPU_REGISTER, intents.SPU_UNREGISTER, intents.SPU_UPDATE,
                       intents.SPU_STATUS, intents.OUTAGE})
TOPIC_KINDS = frozenset({intents.TOPIC_CREATE, intents.TOPIC_PROVISION, intents.TOPIC_DELETE,
                         intents.TOPIC_UPDATE})
# The topic settings the engine applies (a topic row's fields).
TOPIC_SETTINGS = ("min_lrs", "max_lag", "producer_rate", "unclean_leader_election")


@dataclass
class SpuSpec:
    """The registered SPUs as the log says: each one's rack, and whether it is Online."""
    racks: dict[int, str]
    online: dict[int, bool]


@dataclass
class TopicChanges:
    """What the topic entries ask of the engine's replicated topics."""
    # Deleted (name -> the deleted row's id, None when the entry does not say): dropped
    # first, when the engine replicates that topic under that id.
    dropped: dict[str, int | None] = field(default_factory=dict)
    # Created or provisioned as Provisioned since: their rows are read, for the partition
    # ids the entries do not carry.
    added: set[str] = field(default_factory=set)
    # Settings changed since (name -> {field: value}), on topics not in ``added``.
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.dropped or self.added or self.settings)


def is_intent(entry: Entry) -> bool:
    return entry.get("type") in SPU_KINDS or entry.get("type") in TOPIC_KINDS


def fold_spus(held: SpuSpec, entries: Iterable[Entry]) -> SpuSpec:
    """The SPUs once ``entries`` are applied to ``held`` (which is not changed)."""
    racks, online = dict(held.racks), dict(held.online)
    for entry in entries:
        kind = entry.get("type")
        if kind not in SPU_KINDS:
            continue
        if kind == intents.OUTAGE:
            continue  # its spu-status entries follow it; a kill changes no status
        spu = int(entry["spu"])
        if kind == intents.SPU_REGISTER:
            racks[spu] = entry.get("rack") or ""
            online.setdefault(spu, False)  # a new SPU's row starts Init: not Online
        elif kind == intents.SPU_UNREGISTER:
            racks.pop(spu, None)
            online.pop(spu, None)
        elif spu not in racks:
            continue  # an update or a status of an SPU unregistered since: no row
        elif kind == intents.SPU_UPDATE:
            rack = entry.get("changed", {}).get("rack")
            if rack is not None:
                racks[spu] = rack.get("to") or ""
        else:  # SPU_STATUS
            online[spu] = entry.get("to") == ONLINE
    return SpuSpec(racks, online)


def fold_topics(entries: Iterable[Entry]) -> TopicChanges:
    """What ``entries`` ask of the replicated topics, in offset order: a topic deleted
    and created again under its name is dropped, then read afresh."""
    out = TopicChanges()
    for entry in entries:
        kind = entry.get("type")
        if kind not in TOPIC_KINDS:
            continue
        name = entry["topic"]
        if kind == intents.TOPIC_DELETE:
            out.added.discard(name)
            out.settings.pop(name, None)
            out.dropped[name] = entry.get("topic_pk")
        elif kind == intents.TOPIC_UPDATE:
            changed = {f: c["to"] for f, c in entry.get("changed", {}).items()
                       if f in TOPIC_SETTINGS}
            if changed and name not in out.added:  # else its row, read, has them
                out.settings.setdefault(name, {}).update(changed)
        elif entry.get("resolution") == PROVISIONED:  # created or provisioned
            out.added.add(name)
            out.settings.pop(name, None)
    return out


def alone_until(entries: Sequence[Entry], replicated: Collection[str]) -> int:
    """How many of ``entries`` (in offset order) a unit can adopt with no set but the ones
    they reach loaded: those before the first that makes a topic under a name the engine
    replicates (``replicated``) or an earlier entry deleted. A topic deleted and made
    again is then dropped by one unit and made by the next, each alone, where both at once
    need every set loaded (``adoptable_alone``): a whole tick, seconds at 100,000."""
    gone: set[str] = set()
    for count, entry in enumerate(entries):
        kind = entry.get("type")
        if kind not in TOPIC_KINDS or kind == intents.TOPIC_UPDATE:
            continue
        name = entry["topic"]
        if kind == intents.TOPIC_DELETE:
            gone.add(name)
        elif entry.get("resolution") == PROVISIONED and (name in gone or name in replicated):
            return count
    return len(entries)


@dataclass
class AloneChanges:
    """What the intents ask of replica sets when it can be adopted without loading every
    set: SPUs registered, forgotten or changing status (``spus``: those whose sets it
    reaches, loaded alone), topics added (made alone) and dropped (deleted by name)."""
    spus: set[int] = field(default_factory=set)
    added: set[str] = field(default_factory=set)
    dropped: dict[str, int | None] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.spus or self.added or self.dropped)


def adoptable_alone(held: SpuSpec, spec: SpuSpec, topics: TopicChanges,
                    named: Collection[int] = ()) -> AloneChanges | None:
    """These changes as the replica sets they touch can adopt them alone, or None when
    they need every set loaded (a topic both dropped and added, made again under its
    name). ``named``: every SPU the engine's state names (``ClusterState.spus``: the
    registered ones, and any a replica map names, kept offline once unregistered).

    An SPU changing status touches exactly the sets with a replica on it: ``spu_offline``
    and ``spu_back`` reach sets only through ``ClusterState.sets_of``, and change the
    meta's SPU statuses, connections and expired sessions, which every unit loads. An SPU
    registered touches no set; one forgotten is dropped from the state once no set names
    it, which its sets alone tell, and so is every SPU the state names that is no longer
    registered (the engine's reconcile checks them all at each SPU change): their sets
    are loaded too. A new topic's sets read only the SPUs' statuses; a dropped topic's
    are deleted by its name."""
    if topics.added & topics.dropped.keys():
        return None
    changed = {s for s, up in spec.online.items() if held.online.get(s) != up}
    changed |= held.racks.keys() - spec.racks.keys()
    if changed:
        changed |= set(named) - spec.racks.keys()
    return AloneChanges(changed, set(topics.added), dict(topics.dropped))


def needs_replica_sets(held: SpuSpec, spec: SpuSpec, topics: TopicChanges) -> bool:
    """Whether applying these changes touches replica sets (an SPU registered, forgotten
    or changing status; a topic added or dropped), or only the meta (racks, settings)."""
    return (held.online != spec.online or held.racks.keys() != spec.racks.keys()
            or bool(topics.dropped or topics.added))
