"""History's writes: snapshots of the replayed cluster, and their retention.

A snapshot is the fold of the log up to its offset, made from the previous
snapshot and the entries after it (the first one from offset 0, or from the
store's rows when the log was trimmed before history was installed). Snapshots
older than ``HISTORY_RETENTION_S`` go, except the newest of them: history begins
there, and the log keeps every entry after it (``trim_floor``). Snapshots more than
``HISTORY_LOG_MAX_ENTRIES`` behind the head go too, whatever their age: the cap wins.
"""
from __future__ import annotations

import time

from django.conf import settings
from django.db import transaction

from cluster import ports
from history.core import replay as core
from history.core.replay import Moment
from cluster.core.replication.metadata import Status
from cluster.core.replication.state import Resolution
from cluster.models import Partition, Spu
from history.models import Snapshot

BATCH = 5000


def snapshot_take() -> Snapshot | None:
    """Fold the log from the newest snapshot to its head and keep it; None if nothing new."""
    with ports.bound_to_store() as store:
        head = ports.log_head()
        newest = Snapshot.objects.order_by("-offset").values_list("pk", "offset", "at").first()
        if newest is not None and newest[1] >= head:
            return None
        base = _base(store, newest)
        for entry in ports.read_log_from(base.offset + 1):
            if entry.offset > head:
                break
            core.apply(base, entry.offset, entry.data)
    snap = _save(base)
    # Beat sends this task to one node (cluster/routes.py): the next snapshot folds on from
    # this moment instead of decoding it again, half of a snapshot's 2.5-5.6 s at 100,000.
    ports.engine().snapshot_kept.keep(store, (base.offset, base.at), base)
    snapshot_prune()
    return snap


def _base(store: str, newest: tuple[int, int, int] | None) -> Moment:
    """What the next snapshot folds from: the newest one, as this process saved it when it
    did (taken out of the engine's keeping: it is folded in place), else decoded."""
    if newest is None:
        return _first_base()
    kept = ports.engine().snapshot_kept.take(store, newest[1:])
    if kept is not None:
        return kept
    return core.decode(bytes(Snapshot.objects.values_list("data", flat=True).get(
        pk=newest[0])))


def _save(moment: Moment) -> Snapshot:
    snap, _ = Snapshot.objects.update_or_create(
        offset=moment.offset, defaults={"at": moment.at, "data": core.encode(moment),
                                        "partitions": len(moment.statuses)})
    return snap


def _first_base() -> Moment:
    """Offset 0 when the log holds everything; else the store's rows at what it applied."""
    if ports.log_start() <= 1:
        return Moment()
    ports.catch_up_store()
    with transaction.atomic():
        applied = ports.applied_offset()
        m = Moment(offset=applied, at=int(time.time() * 1000))
        for p in Partition.objects.select_related("topic").only(
                "topic__name", "index", "replicas", "leader", "lrs", "resolution", "epoch",
                "hw", "replica_status"):
            key = (p.topic.name, p.index)
            m.statuses[key] = Status(tuple(p.replicas), p.leader, tuple(p.lrs),
                                     Resolution(p.resolution), p.epoch)
            m.offsets[key] = (p.hw, tuple((r["spu"], r["leo"], r["hw"])
                                          for r in p.replica_status or []))
        m.spus = {s: r == core.ONLINE for s, r in Spu.objects.values_list("id", "resolution")}
    return m


def snapshot_prune(now_ms: int | None = None) -> int:
    """Drop snapshots past retention, keeping the newest of them (where history begins),
    and every snapshot more than ``HISTORY_LOG_MAX_ENTRIES`` behind the head: the cap
    wins over the retention, so the log kept after the oldest snapshot stays bounded."""
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    cutoff = now_ms - int(settings.HISTORY_RETENTION_S * 1000)
    with ports.bound_to_store():
        line = ports.log_head() - settings.HISTORY_LOG_MAX_ENTRIES
    rows = list(Snapshot.objects.order_by("-offset").values_list("pk", "offset", "at"))
    old = [(pk, offset) for pk, offset, at in rows if at < cutoff or offset < line]
    if not old:
        return 0
    # The newest old one stays where it is only old by age (history begins there), or
    # when it is the last snapshot of all (the log exceeds the cap until the next one).
    keep_newest = old[0][1] >= line or len(old) == len(rows)
    drop = [pk for pk, _ in (old[1:] if keep_newest else old)]
    if not drop:
        return 0
    deleted, _ = Snapshot.objects.filter(pk__in=drop).delete()
    return deleted


def snapshot_if_due(now_ms: int | None = None) -> Snapshot | None:
    """The beat's check: a snapshot every HISTORY_SNAPSHOT_S or HISTORY_SNAPSHOT_ENTRIES."""
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    newest = Snapshot.objects.order_by("-offset").values_list("offset", "taken").first()
    if newest is not None:
        with ports.bound_to_store():
            behind = ports.log_head() - newest[0]
        age_s = time.time() - newest[1].timestamp()
        if behind < settings.HISTORY_SNAPSHOT_ENTRIES and age_s < settings.HISTORY_SNAPSHOT_S:
            return None
    return snapshot_take()


def trim_floor() -> int | None:
    """The log's trim keeps every entry after the oldest snapshot."""
    oldest = Snapshot.objects.order_by("offset").values_list("offset", flat=True).first()
    return None if oldest is None else oldest + 1
