"""Topic use cases: create (computed or manual, dry run), delete, reconcile."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from itertools import chain

from django.db import IntegrityError, connection, transaction

from cluster.core.assignment import ReplicaMap, SpuPlacement
from cluster.core.manual_assignment import InvalidReplicaMap, parse_assignment
from cluster.core.partitions import (UnderReplicatedStart, under_replicated_starts,
                                     under_replicated_summary)
from cluster.core.spus import SpuResolution
from cluster.core.topic_controller import (MAX_LAG, REVISITED_ON_CLUSTER_CHANGE, TopicDecision,
                                           TopicResolution, TopicSpec, reconcile_topic,
                                           spec_problems)
from cluster.errors import Conflict, InvalidInput, NotFound
from cluster.core.replication import intents
from cluster.models import ClusterState, Spu, Topic
from cluster.services.events import Actor, record_intent
from cluster.perf import gc_paused

CONTROLLER = "topic-controller"
# Leader (None: leaderless) and LRS per partition, by partition index.
PartitionStatuses = tuple[Sequence[int | None], Sequence[Sequence[int]]]


@dataclass(frozen=True)
class TopicOutcome:
    """What a create answered: the stored topic, or what a dry run would store."""
    name: str
    resolution: str
    reason: str
    replica_map: ReplicaMap
    stored: bool
    start_index: int | None = None
    settings: dict[str, object] = field(default_factory=dict)
    under_replicated: tuple[UnderReplicatedStart, ...] = ()

    @property
    def warning(self) -> str:
        return under_replicated_summary(self.under_replicated, len(self.replica_map))

    def as_json(self) -> dict[str, object]:
        """The ``topic describe --json`` shape."""
        return {"name": self.name, "resolution": self.resolution,
                "reason": self.reason,
                "partitions": [{"id": i, "replicas": r}
                               for i, r in enumerate(self.replica_map)],
                **self.settings}

    def as_json_with_warning(self) -> dict[str, object]:
        """The describe shape plus which partitions start under-replicated, and why."""
        return {**self.as_json(), "warning": self.warning,
                "under_replicated": [{"partition": u.partition,
                                      "offline_spus": list(u.offline_spus),
                                      "live_replicas": u.live_replicas, "reason": u.reason}
                                     for u in self.under_replicated]}


def topic_create(*, name: str, partitions: int | None = None,
                 replication: int | None = None, ignore_racks: bool = False,
                 replica_assignment: object = None, min_lrs: int = 1,
                 max_lag: int = 1000, unclean_leader_election: bool = False,
                 dry_run: bool = False, by: Actor = None,
                 status: PartitionStatuses | None = None) -> TopicOutcome:
    """Create a topic; bad input or an invalid map raises and stores nothing.

    ``replica_assignment`` is a parsed file of either shape (DESIGN.md);
    with it, partitions and replication come from the file. ``status``: each
    partition's leader and LRS as a real cluster has them (``cluster import``),
    instead of guessing them from which SPUs are online.
    """
    spec = _spec_from_input(name, partitions, replication, ignore_racks,
                            replica_assignment)
    _check_settings(spec, min_lrs, max_lag)
    settings = {"partition_count": spec.partitions,
                "replication": spec.replication,
                "ignore_rack_assignment": spec.ignore_racks,
                "min_lrs": min_lrs, "max_lag": max_lag,
                "unclean_leader_election": unclean_leader_election,
                "manual": spec.manual_map is not None}
    # A topic's map is a list per partition: collections while building 100,000 of them
    # cost more than the work (0.45 s of a 2 s create on PostgreSQL).
    with gc_paused():
        if dry_run:
            return _preview(spec, settings)
        try:
            return _store_new_topic(spec, min_lrs, max_lag, settings, by, status)
        except IntegrityError:
            raise Conflict(f"topic {name!r} already exists", field="name") from None


def _spec_from_input(name: str, partitions: int | None, replication: int | None,
                     ignore_racks: bool, replica_assignment: object) -> TopicSpec:
    if replica_assignment is None:
        if partitions is None or replication is None:
            raise InvalidInput("partitions and replication are required "
                               "without a replica assignment file",
                               field="partitions" if partitions is None else "replication")
        spec = TopicSpec(name, partitions, replication, ignore_racks)
    else:
        spec = _manual_spec(name, partitions, replication, ignore_racks,
                            replica_assignment)
    problems = spec_problems(spec)
    if problems:
        raise InvalidInput("; ".join(message for _, message in problems),
                           field=problems[0][0],
                           details=[{"field": f, "message": m} for f, m in problems])
    return spec


def _manual_spec(name: str, partitions: int | None, replication: int | None,
                 ignore_racks: bool, data: object) -> TopicSpec:
    try:
        replica_map = parse_assignment(data)
    except InvalidReplicaMap as exc:
        raise InvalidInput(f"invalid replica assignment: {exc}",
                           field="replica_assignment",
                           details=[p.as_dict() for p in exc.problems]) from None
    file_partitions, file_replication = len(replica_map), len(replica_map[0])
    for label, given, actual in (("partitions", partitions, file_partitions),
                                 ("replication", replication, file_replication)):
        if given is not None and given != actual:
            raise InvalidInput(f"{label} {given} conflicts with the replica "
                               f"assignment file, which has {actual}", field=label)
    return TopicSpec(name, file_partitions, file_replication, ignore_racks,
                     manual_map=replica_map)


def _check_settings(spec: TopicSpec, min_lrs: int, max_lag: int) -> None:
    if not 1 <= min_lrs <= spec.replication:
        raise InvalidInput(f"min LRS must be between 1 and the replication "
                           f"factor ({spec.replication})", field="min_lrs")
    if not 1 <= max_lag <= MAX_LAG:
        raise InvalidInput(f"max lag must be between 1 and {MAX_LAG:,} records",
                           field="max_lag")


def _placements() -> list[SpuPlacement]:
    return [SpuPlacement(spu_id, rack or None)
            for spu_id, rack in Spu.objects.order_by("id").values_list("id", "rack")]


def _cursor(lock: bool) -> int:
    query = ClusterState.objects.select_for_update() if lock else ClusterState.objects
    state, _ = query.get_or_create(pk=ClusterState.SINGLETON)
    return state.assignment_cursor


def _decide_or_refuse(spec: TopicSpec, cursor: int) -> TopicDecision:
    decision = reconcile_topic(spec, TopicResolution.INIT, _placements(), cursor)
    if decision.resolution is not TopicResolution.INVALID_CONFIG:
        return decision
    if spec.manual_map is not None:
        raise InvalidInput(f"invalid replica assignment: {decision.reason}",
                           field="replica_assignment",
                           details=[p.as_dict() for p in decision.problems])
    raise InvalidInput(decision.reason, field="ignore_rack_assignment",
                       details={"resolution": decision.resolution.value})


def _preview(spec: TopicSpec, settings: dict[str, object]) -> TopicOutcome:
    if Topic.objects.filter(name=spec.name).exists():
        raise Conflict(f"topic {spec.name!r} already exists", field="name")
    decision = _decide_or_refuse(spec, _cursor(lock=False))
    return TopicOutcome(spec.name, decision.resolution.value, decision.reason,
                        decision.replica_map, stored=False,
                        start_index=decision.start_index, settings=settings,
                        under_replicated=_short_starts(decision.replica_map))


def _online_spus() -> set[int]:
    return set(Spu.objects.filter(resolution=SpuResolution.ONLINE.value)
               .values_list("id", flat=True))


def _short_starts(replica_map: ReplicaMap) -> tuple[UnderReplicatedStart, ...]:
    online = _online_spus()
    # Nothing to say when every SPU the map names is online (the usual case).
    if not replica_map or not _offline_named(replica_map, online):
        return ()
    return tuple(under_replicated_starts(replica_map, online))


def _store_new_topic(spec: TopicSpec, min_lrs: int, max_lag: int,
                     settings: dict[str, object], by: Actor,
                     status: PartitionStatuses | None = None) -> TopicOutcome:
    """Decide, log the topic-create intent, and let the store's projection write the topic
    and its partitions from it (issue 32: the log first)."""
    log_first = not connection.in_atomic_block
    # One transaction holds the cursor's row while the start is chosen and logged: two
    # creations never get the same start.
    with transaction.atomic():
        cursor = _cursor(lock=True)
        # After the lock: a creation of the same name that held it has committed by now.
        if Topic.objects.filter(name=spec.name).exists():
            raise Conflict(f"topic {spec.name!r} already exists", field="name")
        decision = _decide_or_refuse(spec, cursor)
        record_intent(by, _create_entry(spec, settings, decision, cursor, status),
                      inside=log_first)
    return TopicOutcome(spec.name, decision.resolution.value, decision.reason,
                        decision.replica_map if _provisioned(decision) else [], stored=True,
                        start_index=decision.start_index if _provisioned(decision) else None,
                        settings=settings,
                        under_replicated=_short_starts(decision.replica_map)
                        if _provisioned(decision) else ())


def _provisioned(decision: TopicDecision) -> bool:
    return decision.resolution is TopicResolution.PROVISIONED


def _create_entry(spec: TopicSpec, settings: dict[str, object], decision: TopicDecision,
                  cursor: int, status: PartitionStatuses | None) -> dict[str, Any]:
    """The topic-create intent with all the projection needs to write the rows: the
    decision, the cursor after it, and each partition's start."""
    provisioned = _provisioned(decision)
    entry = intents.topic_create(spec.name, None, settings,
                                 decision.replica_map if provisioned else None,
                                 _online_spus() if provisioned else ())
    _add_decision(entry, decision, cursor)
    if not provisioned and spec.manual_map is not None:
        entry["manual_map"] = spec.manual_map
    if provisioned and status is not None:
        entry["leaders"], entry["lrs"] = list(status[0]), [list(live) for live in status[1]]
    return entry


def _offline_named(replica_map: ReplicaMap, online: set[int]) -> set[int]:
    """SPUs the map names that are not online (a set built in C, not a loop per partition)."""
    return set(chain.from_iterable(replica_map)) - online


def topics_reconcile_waiting(*, by: Actor = CONTROLLER) -> list[str]:
    """A cluster change: re-evaluate Pending and InsufficientResources topics (003's Add
    SPU) and InvalidConfig ones, which a changed cluster may cure (a rack mix).

    Each decision that changes a topic is a topic-provision intent, logged first; the
    store's projection writes the topic's status and partitions from it."""
    log_first = not connection.in_atomic_block
    with transaction.atomic():
        waiting = Topic.objects.select_for_update().filter(
            resolution__in=[r.value for r in REVISITED_ON_CLUSTER_CHANGE]
        ).order_by("created_at", "id")
        placements, changed = _placements(), []
        for topic in waiting:
            # The cursor is read again per topic: each provisioned topic moves it.
            cursor = _cursor(lock=True)
            decision = reconcile_topic(_spec_of(topic), TopicResolution(topic.resolution),
                                       placements, cursor)
            if decision.transitions:
                record_intent(by, _provision_entry(topic, decision, cursor), inside=log_first)
                changed.append(topic.name)
    return changed


def _provision_entry(topic: Topic, decision: TopicDecision, cursor: int) -> dict[str, Any]:
    provisioned = _provisioned(decision)
    entry = intents.topic_provision(topic.name, topic.pk,
                                    decision.replica_map if provisioned else None,
                                    _online_spus() if provisioned else ())
    _add_decision(entry, decision, cursor)
    return entry


def _add_decision(entry: dict[str, Any], decision: TopicDecision, cursor: int) -> None:
    """What a create or provision entry carries of the controller's decision: the status,
    its transitions and, once provisioned, where its partitions start and the cursor after."""
    entry.update(resolution=decision.resolution.value, reason=decision.reason,
                 transitions=[[b.value, a.value] for b, a in decision.transitions])
    if _provisioned(decision):
        entry["start_index"] = decision.start_index
        if decision.indexes_used:
            entry["cursor"] = cursor + decision.indexes_used


def _spec_of(topic: Topic) -> TopicSpec:
    return TopicSpec(topic.name, topic.partitions, topic.replication_factor,
                     topic.ignore_rack_assignment, topic.manual_replica_map)


def topic_delete(*, name: str, by: Actor = None) -> None:
    """Log the topic-delete intent; the store's projection removes the rows."""
    pk = Topic.objects.filter(name=name).values_list("pk", flat=True).first()
    if pk is None:
        raise NotFound(f"topic {name!r} not found", field="name")
    record_intent(by, intents.topic_delete(name, pk))
