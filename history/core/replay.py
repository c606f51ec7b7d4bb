"""History replay: the cluster at any offset of the metadata log, rebuilt by a fold.

A ``Moment`` is what the store's rows and the replication's offsets held right
after one offset: every partition's logged status (``metadata.fold``), its HW
and each replica's LEO/HW as the latest ``hw`` checkpoint entry recorded them,
the SPUs the engine knows (online or not) and the SPU loops an operator killed.
A moment is rebuilt from the nearest snapshot at or below it (``encode`` /
``decode``), never from offset 0.

HW and LEO are no status entries (they move every tick); ``hw`` checkpoint
entries carry those of the partitions whose offsets moved since the last
checkpoint, at most once per interval and in every unit of work that also
changes a status, so a moment's HW is exact at every status change and at most
one interval old in between (docs/history.md).
"""
from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain

from cluster.core.replication import intents
from cluster.core.replication.hw_codec import Row, pack, unpack
from cluster.core.replication.metadata import Entry, Status, fold
from cluster.core.replication.state import Key, Resolution
from cluster.core.replication.summary import PartitionSummary, ReplicaStatus
from cluster.core.replication.unclean import waiting_for

ONLINE = "Online"
# One replica's offsets in a checkpoint: (spu, leo, hw).
Offsets = tuple[int, tuple[tuple[int, int, int], ...]]


@dataclass
class Moment:
    """The cluster right after ``offset`` (``at``: that entry's time, epoch ms)."""
    offset: int = 0
    at: int = 0
    statuses: dict[Key, Status] = field(default_factory=dict)
    offsets: dict[Key, Offsets] = field(default_factory=dict)
    spus: dict[int, bool] = field(default_factory=dict)
    killed: set[int] = field(default_factory=set)
    # Each SPU's rack as the log recorded it (``spu-registered``, ``spu-rack``); an SPU
    # registered before racks were logged is absent (drawn in its rack now).
    racks: dict[int, str] = field(default_factory=dict)

    def copy(self) -> Moment:
        return Moment(self.offset, self.at, dict(self.statuses), dict(self.offsets),
                      dict(self.spus), set(self.killed), dict(self.racks))


def apply(moment: Moment, offset: int, entry: Entry) -> None:
    """Fold one entry into ``moment`` (entries come in offset order)."""
    fold(moment.statuses, entry)
    kind = entry["type"]
    handler = _HANDLERS.get(kind)
    if handler is not None:
        handler(moment, entry)
    moment.offset = offset
    moment.at = max(moment.at, int(entry.get("at") or 0))


def replay(moment: Moment, entries: Iterable[tuple[int, Entry]]) -> Moment:
    for offset, entry in entries:
        apply(moment, offset, entry)
    return moment


def _topic_replicated(m: Moment, entry: Entry) -> None:
    topic = entry["topic"]
    for index, row in enumerate(entry["statuses"]):
        m.offsets.pop((topic, index), None)
        for spu in row[0]:
            # The engine registers an SPU named by a map, offline, when it first sees it.
            m.spus.setdefault(spu, False)


def _topic_dropped(m: Moment, entry: Entry) -> None:
    for key in [k for k in m.offsets if k[0] == entry["topic"]]:
        del m.offsets[key]


def _spu_registered(m: Moment, entry: Entry) -> None:
    m.spus.setdefault(entry["spu"], False)
    if "rack" in entry:  # entries written before racks were logged have none
        m.racks[entry["spu"]] = entry["rack"]


def _spu_rack(m: Moment, entry: Entry) -> None:
    m.racks[entry["spu"]] = entry["rack"]


def _spu_forgotten(m: Moment, entry: Entry) -> None:
    m.spus.pop(entry["spu"], None)
    m.racks.pop(entry["spu"], None)


def _spu_sync(m: Moment, entry: Entry) -> None:
    m.spus[entry["spu"]] = bool(entry["online"])


def _spu(m: Moment, entry: Entry) -> None:
    m.spus[entry["spu"]] = entry["resolution"] == ONLINE


def _hw(m: Moment, entry: Entry) -> None:
    offsets = m.offsets
    for topic, rows in entry["topics"].items():
        for partition, hw, flat in (unpack(rows) if isinstance(rows, str) else rows):
            it = iter(flat)
            offsets[(topic, partition)] = (hw, tuple(
                (spu, hw + leo, hw + rhw) for spu, leo, rhw in zip(it, it, it)))


def _unclean(m: Moment, entry: Entry) -> None:
    # The HW given up: the checkpoint of the same commit says it too, this keeps it if not.
    key = (entry["topic"], entry["partition"])
    hw, replicas = m.offsets.get(key, (0, ()))
    new = entry["new_hw"]
    m.offsets[key] = (min(hw, new), tuple((s, leo, min(h, new)) for s, leo, h in replicas))


def _noted(m: Moment, entry: Entry) -> None:
    if entry.get("object_type") != "spu":
        return
    try:
        spu = int(entry["object_name"])
    except (TypeError, ValueError):
        return
    if entry.get("operation") == "kill":
        m.killed.add(spu)
    elif entry.get("operation") in ("start", "online"):
        m.killed.discard(spu)


# --- operator intents (``intents``): what a command did, before any tick adopts it ------

def _topic_placed(m: Moment, entry: Entry) -> None:
    if "replica_map" not in entry:
        return  # created waiting for SPUs: no partitions yet
    topic, offline = entry["topic"], set(entry.get("offline") or ())
    for spu in set(chain.from_iterable(entry["replica_map"])):
        m.spus.setdefault(spu, spu not in offline)
    if offline:
        placed = {(topic, i): Status(tuple(replicas), leader, tuple(lrs),
                                     Resolution.ONLINE if up else Resolution.OFFLINE, 0)
                  for i, (replicas, leader, lrs, up)
                  in enumerate(intents.starting_statuses(entry))}
    else:  # the usual case, built without a list per partition: 100,000 of them in 0.1 s
        online = Resolution.ONLINE
        placed = {(topic, i): Status(r, r[0], r, online, 0)
                  for i, r in enumerate(map(tuple, entry["replica_map"]))}
    # A tick that adopted the topic between the command's commit and its intent already
    # logged the statuses (and maybe moved them on): those stay.
    if (topic, 0) in m.statuses:
        for key, status in placed.items():
            m.statuses.setdefault(key, status)
    else:
        m.statuses.update(placed)


def _topic_deleted(m: Moment, entry: Entry) -> None:
    for key in [k for k in m.statuses if k[0] == entry["topic"]]:
        del m.statuses[key]
    _topic_dropped(m, entry)


def _spu_update(m: Moment, entry: Entry) -> None:
    rack = (entry.get("changed") or {}).get("rack")
    if rack is not None:
        m.racks[entry["spu"]] = rack["to"]


def _spu_status(m: Moment, entry: Entry) -> None:
    m.spus[entry["spu"]] = entry["to"] == ONLINE


def _outage(m: Moment, entry: Entry) -> None:
    action = entry["action"]
    for spu in entry["spus"]:
        if action == "kill":
            m.killed.add(spu)
        else:
            m.spus[spu] = action == "online"
            if action == "online":
                m.killed.discard(spu)


_HANDLERS = {"topic-replicated": _topic_replicated, "topic-dropped": _topic_dropped,
             "spu-registered": _spu_registered, "spu-rack": _spu_rack,
             "spu-forgotten": _spu_forgotten,
             "spu-sync": _spu_sync, "spu": _spu, "hw": _hw,
             "unclean-election": _unclean, "event": _noted,
             intents.TOPIC_CREATE: _topic_placed, intents.TOPIC_PROVISION: _topic_placed,
             intents.TOPIC_DELETE: _topic_deleted, intents.SPU_REGISTER: _spu_registered,
             intents.SPU_UNREGISTER: _spu_forgotten, intents.SPU_UPDATE: _spu_update,
             intents.SPU_STATUS: _spu_status, intents.OUTAGE: _outage}


# --- checkpoints -------------------------------------------------------------------

def checkpoint_entry(changed: Mapping[Key, Offsets]) -> Entry | None:
    """One compact ``hw`` entry for the partitions whose offsets moved (None if none):
    ``topics: {name: packed rows}``, each row (partition, hw, [spu, leo - hw, replica hw
    - hw, ...]) packed by ``hw_codec.pack`` (entries written before it hold the lists)."""
    if not changed:
        return None
    topics: dict[str, list[Row]] = {}
    for (topic, partition), (hw, replicas) in changed.items():
        # Each replica's LEO and HW as distances from the partition's HW: mostly 0, so small.
        flat = [v for spu, leo, rhw in replicas for v in (spu, leo - hw, rhw - hw)]
        topics.setdefault(topic, []).append((partition, hw, flat))
    # Sorted a topic at a time, by partition: one sort of every (topic, partition) key held
    # the GIL for 6.4 s at 1,000,000 partitions (a whole tick's), longer than the lease
    # its renewal thread could not renew meanwhile.
    return {"type": "hw", "topics": {t: pack(sorted(topics[t], key=_partition))
                                     for t in sorted(topics)}}


def _partition(row: Row) -> int:
    return row[0]


# --- rows ----------------------------------------------------------------------------

def partition_at(m: Moment, key: Key) -> tuple[PartitionSummary, tuple[int, ...]]:
    """The core's summary of one partition at the moment, and the SPUs it waits for."""
    status = m.statuses[key]
    hw, replicas = m.offsets.get(key, (0, ()))
    known = {s: (leo, h) for s, leo, h in replicas}
    status_list = [ReplicaStatus(spu=s, leo=known.get(s, (0, 0))[0], hw=known.get(s, (0, 0))[1])
                   for s in status.replicas]
    leo = None if status.leader is None else known.get(status.leader, (0, 0))[0]
    summary = PartitionSummary(topic=key[0], partition=key[1], leader=status.leader,
                               replicas=list(status.replicas), lrs=list(status.lrs),
                               resolution=status.resolution.value, hw=hw, leo=leo,
                               replica_status=status_list)
    # waiting_for reads only a set's resolution and LRS, which a Status carries too.
    return summary, waiting_for(status, m.spus)  # type: ignore[arg-type]


def keys_of(m: Moment, topic: str | None = None) -> list[Key]:
    return sorted(k for k in m.statuses if topic is None or k[0] == topic)


def totals(m: Moment) -> dict[str, int]:
    """The live pages' totals at the moment."""
    sts = m.statuses.values()
    return {"partitions": len(m.statuses),
            "offline": sum(1 for s in sts if s.resolution is Resolution.OFFLINE),
            "leaderless": sum(1 for s in sts if s.leader is None),
            "under_replicated": sum(1 for s in sts if len(s.lrs) < len(s.replicas)),
            "spus": len(m.spus), "spus_offline": sum(1 for up in m.spus.values() if not up),
            "spus_killed": len(m.killed)}


# --- snapshots ----------------------------------------------------------------------

def _triples(flat: list[int]) -> tuple[tuple[int, int, int], ...]:
    it = iter(flat)
    return tuple(zip(it, it, it))


def encode(m: Moment) -> bytes:
    """A snapshot: the moment as compressed JSON."""
    # Tuples are JSON arrays: the rows as ``_status_row`` writes them, without its lists
    # and with each resolution's value looked up (``.value`` was a fifth of an encode).
    value, flat = _VALUES, chain.from_iterable
    doc = {"offset": m.offset, "at": m.at,
           "statuses": [(t, p, s.replicas, s.leader, s.lrs, value[s.resolution], s.epoch)
                        for (t, p), s in m.statuses.items()],
           "offsets": [(t, p, hw, list(flat(reps))) for (t, p), (hw, reps) in m.offsets.items()],
           "spus": [[s, up] for s, up in m.spus.items()], "killed": sorted(m.killed),
           "racks": [[s, r] for s, r in m.racks.items()]}
    return zlib.compress(json.dumps(doc, separators=(",", ":")).encode(), 6)


_RESOLUTIONS = {r.value: r for r in Resolution}
_VALUES = {r: r.value for r in Resolution}


def decode(blob: bytes) -> Moment:
    doc = json.loads(zlib.decompress(blob))
    m = Moment(offset=doc["offset"], at=doc["at"], killed=set(doc["killed"]))
    res = _RESOLUTIONS
    m.statuses = {(t, p): Status(tuple(replicas), leader, tuple(lrs), res[r], epoch)
                  for t, p, replicas, leader, lrs, r, epoch in doc["statuses"]}
    m.offsets = {(t, p): (hw, _triples(f)) for t, p, hw, f in doc["offsets"]}
    m.spus = {s: up for s, up in doc["spus"]}
    m.racks = {s: r for s, r in doc.get("racks", [])}  # snapshots before racks: none
    return m
