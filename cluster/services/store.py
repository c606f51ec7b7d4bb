"""The operator's answers to a refused Redis: adopt it, or give a copied database its own id.

Both are explicit and logged once; neither is ever done silently
(cluster/engine/store_identity.py says when a Redis is refused).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Sum

from cluster.engine import store_identity as identity
from cluster.adapters.redis_keys import client, key
from cluster.errors import Conflict
from cluster.models import ClusterState, Partition, TopicSpuCount
from cluster.projections import aggregates
from cluster.services.events import Actor, log_event

RECOVERY_NOTE = ("what it lacks of them is reported once by recovery (hot-state-lost) "
                 "at the next tick")


@dataclass(frozen=True)
class StoreChange:
    """What an adopt or a reidentify did, for the command's line and --json."""
    changed: bool
    message: str
    store_id: str
    marker: str

    def as_json(self) -> dict[str, object]:
        return {"changed": self.changed, "message": self.message, "store_id": self.store_id,
                "marker": self.marker}


def _committed() -> tuple[int, int]:
    """(committed records, partitions holding some) as the store has them."""
    got = Partition.objects.filter(hw__gt=0).aggregate(records=Sum("hw"), partitions=Count("id"))
    return got["records"] or 0, got["partitions"]


def store_adopt_redis(*, take_over: bool = False, by: Actor = None) -> StoreChange:
    """Make the Redis reached this store's: a new marker, recorded, and one event."""
    row = identity.store_row()
    store, here = str(row.store_id), identity.database_identity()
    found = identity.read_owner(store)
    verdict = identity.judge(row, found, here)
    if verdict.action != "refuse":
        owner_id = identity.check_hot_state_identity()
        return StoreChange(False, f"{identity.reached_redis()} already holds store {owner_id}'s "
                                  "hot state: nothing to adopt", owner_id,
                           identity.store_row().redis_marker)
    if verdict.kind == "copy" and not take_over:
        raise identity.HotStateMismatch(verdict.reason)
    records, partitions = _committed()
    had_state = bool(client().exists(key("meta", store)))
    owner = identity.new_owner(store, here)
    message = (f"adopted {identity.reached_redis()} for store {store} in place of "
               f"{row.redis_url or 'an unrecorded Redis'}"
               f"{f' (marker {row.redis_marker})' if row.redis_marker else ''}: it "
               f"{'holds hot state of this store' if had_state else 'holds none of its hot state'}"
               f"; the store holds {records} committed records in {partitions} partition(s), "
               f"{RECOVERY_NOTE}")
    with transaction.atomic():
        log_event(by, "store", store, "redis-adopted", {
            "redis": identity.reached_redis(), "marker": owner.marker,
            "previous_redis": row.redis_url, "previous_marker": row.redis_marker,
            "found": None if found is None else {"marker": found.marker,
                                                 "database": found.database},
            "namespace_had_state": had_state, "store_committed_records": records,
            "store_partitions_with_records": partitions}, result=message)
        identity.record_owner(row, owner)
        identity.claim_namespace(owner, replace=True)  # last: a failure undoes the rest
    return StoreChange(True, message, store, owner.marker)


def store_reidentify(*, force: bool = False, by: Actor = None) -> StoreChange:
    """A new store id (so a new, empty namespace) for a database copied from another."""
    row = identity.store_row()
    old, here = str(row.store_id), identity.database_identity()
    verdict = identity.judge(row, identity.read_owner(old), here)
    if verdict.kind != "copy" and not force:
        raise Conflict(f"store {old} owns its namespace in {identity.reached_redis()} (or none "
                       f"is claimed): nothing to reidentify; --force gives it a new id anyway")
    new = str(uuid.uuid4())
    records, partitions = _committed()
    owner = identity.new_owner(new, here)
    message = (f"store {old} of database {here} is now store {new}, with a new namespace in "
               f"{identity.reached_redis()}; the store holds {records} committed records in "
               f"{partitions} partition(s), {RECOVERY_NOTE}")
    with transaction.atomic():
        ClusterState.objects.filter(pk=row.pk).update(store_id=new)
        row.store_id = uuid.UUID(new)
        log_event(by, "store", new, "reidentified", {
            "previous_store": old, "database": here, "redis": identity.reached_redis(),
            "marker": owner.marker, "store_committed_records": records,
            "store_partitions_with_records": partitions}, result=message)
        identity.record_owner(row, owner)
        if not identity.claim_namespace(owner):
            raise Conflict(f"namespace repl:{{{new}}} is already claimed")  # a uuid4 collision
    return StoreChange(True, message, new, owner.marker)


def store_recount(*, by: Actor = None) -> dict[str, int]:
    """Count every partition row again, replacing the maintained counts pages read: for
    rows written behind the projection's back (the reconcile beat does it when it heals
    drifted rows). Returns how many partitions and count rows there are."""
    aggregates.rebuild()
    counts = {"partitions": Partition.objects.count(),
              "count_rows": TopicSpuCount.objects.count()}
    log_event(by, "store", "partition-counts", "recount", counts)
    return counts
