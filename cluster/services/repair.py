"""The way back from a hot state whose records and status disagree (issue 35.1).

A set's status and its records key land in one transaction, so a disagreement is
damage, not a race: two Redis servers that wrote one append-only file left it, and
from then on every load of the set is refused (set_codec.RecordsMismatch, naming the
partitions: the tick fails, /readyz says so). Its records cannot be trusted, so they
are not guessed at: ``store_repair`` rebuilds each such set the way recovery after a
Redis loss does (services/recovery.py), up to the highest HW that was given out, the
status's or the store's, with compacted logs. Offsets go on from there; the committed
records it retained are gone, and one ``hot-state-lost`` entry (an event per topic)
counts them, with the HW each set was restored to, so a later loss does not count
them again. A repaired set agrees with its records, so a second run finds nothing and
reports nothing.

The status itself (replicas, leader, LRS, epoch) is kept: it is what the engine last
committed, and the log's entries already describe it. The values of the lost ids stay
in the values hash (which ids they were is what was lost) until the topic is dropped.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from cluster.adapters import hot_state, metadata_log, set_loading, set_records
from cluster.adapters.hot_state import HotState
from cluster.adapters.redis_keys import bound_to_store
from cluster.adapters.set_codec import decode_fields, start_and_apart, summary
from cluster.engine.engine import current as engine
from cluster.engine.store_identity import check_hot_state_identity
from cluster.core.replication import Key
from cluster.core.replication.hw_codec import unpack
from cluster.models import Partition
from cluster.projections import store as store_projection
from cluster.services.recovery import reported_floors

CAUSE = "records-disagree"
REASON = ("records and status disagreed (two Redis servers wrote one append-only file?): "
          "{missing} committed records of {partitions} partition(s) are gone; `store repair` "
          "rebuilt them from the store, offsets, HW and LEO go on from the HW restored")
NOTHING = "nothing to repair: every partition's records agree with its status"


@dataclass(frozen=True)
class Damaged:
    """One set whose records key disagrees with its status, and what repairing it loses."""
    topic: str
    partition: int
    status_records: int        # the ids the status says its records key holds
    status_last_id: int | None
    records_found: int         # the ids the key holds
    log_start: int
    hw: int                    # the status's HW
    store_hw: int              # the partition row's
    log_hw: int                # the metadata log's last checkpoint of it (0: none held)
    restored_hw: int           # where the repair puts it: the highest of the three
    lost_committed: int        # retained committed records whose ids are gone
    lost_uncommitted: int      # records above the restored HW, never committed


@dataclass(frozen=True)
class Repair:
    """What ``store repair`` found (and, with ``repaired``, rebuilt)."""
    repaired: bool
    partitions: list[Damaged] = field(default_factory=list)

    @property
    def missing(self) -> int:
        return sum(d.lost_committed for d in self.partitions)

    @property
    def message(self) -> str:
        if not self.partitions:
            return NOTHING
        parts = ", ".join(f"{d.topic}/{d.partition}" for d in self.partitions[:10])
        if len(self.partitions) > 10:  # every one is in the listing and --json
            parts += f" and {len(self.partitions) - 10} more"
        uncommitted = sum(d.lost_uncommitted for d in self.partitions)
        if self.repaired:
            return (f"repaired {len(self.partitions)} partition(s) ({parts}) from the store: "
                    f"{self.missing} committed records lost, {uncommitted} uncommitted "
                    f"dropped; one hot-state-lost event per topic says so")
        return (f"{len(self.partitions)} partition(s) whose records and status disagree "
                f"({parts}); `manage.py store repair --yes` rebuilds them from the store, "
                f"losing {self.missing} committed and {uncommitted} uncommitted records")

    def as_json(self) -> dict[str, Any]:
        return {"repaired": self.repaired, "missing": self.missing, "message": self.message,
                "partitions": [asdict(d) for d in self.partitions]}


def store_repair_list() -> Repair:
    """The sets a load would refuse, and what repairing them would lose; changes nothing."""
    with bound_to_store(check_hot_state_identity()):
        found, topics = _scan()
        return Repair(False, _assess(found, topics, log_hws({k for k, _, _ in found})))


def store_repair(*, lock_timeout_s: float | None = None) -> Repair:
    """Rebuild every set whose records and status disagree from the store, under every
    lease, in one unit of work that notes the loss; nothing found, nothing written.

    The log is read before the leases are taken (it may hold a million entries): no unit
    of work can write a checkpoint of a damaged set meanwhile, since none can load it."""
    with bound_to_store(check_hot_state_identity()):
        logged = log_hws({k for k, _, _ in _scan()[0]})
    # Every lease, no set loaded: the damaged sets are decoded here, since a load refuses them.
    with engine().unit(whole=True, pick=lambda _: (), lock_timeout_s=lock_timeout_s,
                       elections=False) as u:
        hot = u.state
        found = set_loading.disagreeing(hot.topics)
        damaged = _assess(found, hot.topics, logged)  # found again: the lease is held now
        if not damaged:
            u.discard()  # nothing found, nothing written
            return Repair(False)
        for set_key, fields, _ in found:
            _decode_without_records(hot, set_key, fields)
        _restore(hot, damaged)
    return Repair(True, damaged)


def _scan() -> tuple[list[set_records.Disagreeing], dict[str, Any]]:
    """Every set whose records disagree with its status, and the topic table."""
    topics = hot_state.load_selected(lambda _: ()).topics
    return set_loading.disagreeing(topics), topics


def log_hws(keys: set[Key]) -> dict[Key, int]:
    """The HW the retained metadata log last gave each set: its ``hw`` checkpoints (at most
    HISTORY_HW_INTERVAL_S old), lowered by an unclean election, raised by a loss's
    restore, forgotten when the topic is replicated again (another topic, same name)."""
    topics = {t for t, _ in keys}
    out: dict[Key, int] = {}
    if not keys:
        return out
    for entry in metadata_log.read_all(metadata_log.start()):
        data, kind = entry.data, entry.data.get("type")
        if kind == "hw":
            for topic in topics & set(data["topics"]):
                rows = data["topics"][topic]
                for partition, hw, _ in (unpack(rows) if isinstance(rows, str) else rows):
                    if (topic, partition) in keys:
                        out[(topic, partition)] = hw
        elif kind == "unclean-election" and (data["topic"], data["partition"]) in out:
            at = (data["topic"], data["partition"])
            out[at] = min(out[at], data["new_hw"])
        elif kind == "hot-state-lost":
            for topic, parts in (data.get("restored") or {}).items():
                for index, hw in parts.items():
                    if (topic, int(index)) in keys:
                        out[(topic, int(index))] = max(out.get((topic, int(index)), 0), hw)
        elif kind == "topic-replicated" and data.get("topic") in topics:
            out = {k: v for k, v in out.items() if k[0] != data["topic"]}
    return out


def _assess(found: list[set_records.Disagreeing], topics: dict[str, Any],
            logged: dict[Key, int]) -> list[Damaged]:
    pks = {topics[key[0]]["pk"]: key[0] for key, _, _ in found}
    rows = dict(((pks[pk], index), hw) for pk, index, hw in Partition.objects.filter(
        topic_id__in=list(pks)).values_list("topic_id", "index", "hw"))
    floors = reported_floors(pks)
    out = []
    for key, fields, held in sorted(found, key=lambda f: f[0]):
        start, apart = start_and_apart(fields)
        count, last = apart or (0, None)
        hw, store_hw, log_hw = fields[7], rows.get(key, 0), logged.get(key, 0)
        # Offsets given out, by Redis, the store or the log, stay given.
        restored = max(hw, store_hw, log_hw)
        out.append(Damaged(
            key[0], key[1], count, last, held, start, hw, store_hw, log_hw, restored,
            # Records below an earlier loss's restored HW were reported gone then.
            max(0, restored - max(start, floors.get(key, 0))),
            max(0, start + count - restored)))
    return out


def _decode_without_records(hot: HotState, set_key: Key, fields: list[Any]) -> None:
    """The status decoded with stand-in ids where its records were (-1, and its last id at
    the end so the check passes): the repair compacts them all away before any save."""
    count, last = start_and_apart(fields)[1] or (0, None)
    ids = [-1] * count
    if count and last is not None:
        ids[-1] = last
    rs, _ = decode_fields(fields, ids)
    hot.state.replica_sets[set_key] = rs
    hot.state.steady.drop(set_key)  # another set under the key
    hot.before[set_key] = summary(rs)
    # Nothing known of the key: the save writes it whole (here: deletes it, no log left).
    hot.stored.pop(set_key, None)


def _restore(hot: HotState, damaged: list[Damaged]) -> None:
    lost: dict[str, dict[str, int]] = {}
    restored: dict[str, dict[str, int]] = {}
    for d in damaged:
        rs = hot.state.replica_sets[(d.topic, d.partition)]
        hot.state.steady.leave(rs)  # restored behind the core's back: rounds look at it again
        hot_state.restore_at(rs, d.restored_hw)
        restored.setdefault(d.topic, {})[str(d.partition)] = d.restored_hw
        lost.setdefault(d.topic, {})[str(d.partition)] = d.lost_committed
    # Values of ids the damaged runs named may survive: new ids must stay above them.
    floor = hot_state.highest_value_id(hot.topics) + 1
    hot.state.next_record_id = max(hot.state.next_record_id, floor)
    missing = sum(d.lost_committed for d in damaged)
    hot.log.append({
        "type": "hot-state-lost", "cause": CAUSE, "topics": lost, "missing": missing,
        "restored": restored, "topic_pks": {t: hot.topics[t]["pk"] for t in lost},
        "uncommitted": sum(d.lost_uncommitted for d in damaged),
        "head": metadata_log.head(), "applied": store_projection.applied_offset(),
        "reason": REASON.format(missing=missing, partitions=len(damaged))})
