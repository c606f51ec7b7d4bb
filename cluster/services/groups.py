"""SPU-group use cases: create, scale, delete; each provisions managed SPUs.

The group's row is written in the command's transaction; its managed SPUs are intents
logged first (issue 32): each SPU the group gains or loses is a ``spu-register`` /
``spu-unregister`` entry naming the group, whose rows the store's projection writes
(cluster/projections/intents.py) in the same transaction, so the log lists them as soon
as the command returned and history shows them with no worker running. Before its first
entry is appended the transaction takes the lock every catch-up takes (and holds it to its
commit): no other process applies an entry that names a group row it cannot see yet.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection, transaction

from cluster.core.replication import intents
from cluster.core.spu_groups import (GroupResolution, default_min_id,
                                     group_input_problems, plan_group)
from cluster.errors import Conflict, InvalidInput, NotFound
from cluster.models import Spu, SpuGroup
from cluster.projections import intents as intent_rows
from cluster.selectors.filters import topics_on_spus
from cluster.services.events import Actor, log_event, record_intents
from cluster.services.topics import topics_reconcile_waiting

CONTROLLER = "spg-controller"


@contextmanager
def _changing_groups() -> Iterator[bool]:
    """One transaction for a group's row and its SPUs' intents; yields whether the log is
    written first (not when a caller's transaction holds this one: its rollback must undo
    the SPUs, so their rows come first and the entries after its commit)."""
    log_first = not connection.in_atomic_block
    with transaction.atomic():
        yield log_first


def _log(by: Actor, entries: list[dict[str, Any]], log_first: bool) -> None:
    """The SPUs' intents; the catch-up's lock first (validation ran without it)."""
    if log_first and entries:
        intent_rows.hold()
    record_intents(by, entries, inside=log_first)


def spg_create(*, name: str, replicas: int, min_id: int | None = None,
               rack: str = "", storage_size: str = "1Gi",
               by: Actor = None) -> SpuGroup:
    """Store the group; Reserved with its SPUs, or Invalid when ids collide."""
    with _changing_groups() as log_first:
        if min_id is None:
            min_id = default_min_id(Spu.objects.values_list("id", flat=True))
        problems = group_input_problems(name, replicas, min_id, storage_size, rack)
        if problems:
            raise InvalidInput("; ".join(problems), details=problems)
        if SpuGroup.objects.filter(name=name).exists():
            raise Conflict(f"SPU group {name!r} already exists", field="name")
        group = SpuGroup.objects.create(name=name, replicas=replicas, min_id=min_id,
                                        rack=rack, storage_size=storage_size)
        log_event(by, "spu-group", name, "create",
                  {"replicas": replicas, "min_id": min_id, "rack": rack,
                   "storage_size": storage_size})
        added = _provision(group, log_first)[1]
    _reconcile_topics(added)
    return group


def spg_scale(*, name: str, replicas: int, force: bool = False,
              by: Actor = None) -> SpuGroup:
    """Scale up provisions new ids; down terminates the highest ids (003).

    Down is refused while an SPU it would terminate holds replicas, unless ``force``.
    """
    with _changing_groups() as log_first:
        group, added = _scale(name, replicas, force, by, log_first)
    _reconcile_topics(added)
    return group


def _scale(name: str, replicas: int, force: bool, by: Actor,
           log_first: bool) -> tuple[SpuGroup, bool]:
    group = _get(name)
    problems = group_input_problems(name, replicas, group.min_id, group.storage_size)
    if problems:
        raise InvalidInput("; ".join(problems), field="replicas", details=problems)
    plan = plan_group(group.min_id, replicas, _owned(group), _others(group))
    if plan.resolution is GroupResolution.INVALID:
        raise Conflict(plan.reason, field="replicas")
    hosting = {} if force else topics_on_spus(sorted(plan.remove))
    if hosting:
        spus = ", ".join(f"SPU {s} ({', '.join(t[:3])}{', ...' if len(t) > 3 else ''})"
                         for s, t in sorted(hosting.items()))
        raise Conflict(f"scaling {name} to {replicas} would terminate SPUs that hold replicas: "
                       f"{spus}; drain them first or scale with --force", field="replicas",
                       details={"spus": {str(s): t for s, t in hosting.items()}})
    log_event(by, "spu-group", name, "scale",
              {"from": group.replicas, "to": replicas})
    group.replicas = replicas
    group.save(update_fields=["replicas"])
    return group, _provision(group, log_first)[1]


def spg_delete(*, name: str, by: Actor = None) -> None:
    with _changing_groups() as log_first:
        group = _get(name)
        spu_ids = sorted(_owned(group))
        log_event(by, "spu-group", name, "delete", {"spus": spu_ids})
        # Its SPUs' intents first: the group's deletion would take their rows with it.
        _log(by, [intents.spu_unregister(spu_id, forced=True, group=name)
                  for spu_id in spu_ids], log_first)
        group.delete()


def spg_reconcile_invalid() -> list[str]:
    """Invalid groups become Reserved once their id range is free again."""
    fixed, added = [], False
    for group in SpuGroup.objects.filter(resolution=GroupResolution.INVALID.value):
        with _changing_groups() as log_first:
            resolution, provisioned = _provision(group, log_first)
        added = added or provisioned
        if resolution is GroupResolution.RESERVED:
            fixed.append(group.name)
    _reconcile_topics(added)
    return fixed


def _get(name: str) -> SpuGroup:
    group = SpuGroup.objects.select_for_update().filter(name=name).first()
    if group is None:
        raise NotFound(f"SPU group {name!r} not found", field="name")
    return group


def _owned(group: SpuGroup) -> set[int]:
    return set(group.spus.values_list("id", flat=True))


def _others(group: SpuGroup) -> set[int]:
    return set(Spu.objects.exclude(group=group).values_list("id", flat=True))


def _provision(group: SpuGroup, log_first: bool) -> tuple[GroupResolution, bool]:
    """The group's status, and an intent per SPU it gains or loses (the store's projection
    writes their rows and their ``provision`` / ``terminate`` events); whether it gained."""
    plan = plan_group(group.min_id, group.replicas, _owned(group), _others(group))
    previous = group.resolution
    group.resolution, group.reason = plan.resolution.value, plan.reason
    group.save(update_fields=["resolution", "reason"])
    if previous != group.resolution:
        log_event(CONTROLLER, "spu-group", group.name, "resolution",
                  {"from": previous, "to": group.resolution}, result=plan.reason)
    name = group.name
    _log(CONTROLLER, [intents.spu_unregister(spu_id, forced=True, group=name)
                      for spu_id in sorted(plan.remove)]
         + [intents.spu_register(spu_id, group.rack, f"{name}-{spu_id}:9005",
                                 f"{name}-{spu_id}:9006", group=name) for spu_id in plan.add],
         log_first)
    return plan.resolution, bool(plan.add)


def _reconcile_topics(added: bool) -> None:
    """New SPUs may provision waiting topics (003's Add SPU): once the group's transaction
    committed, so that their provision intents are logged first too."""
    if added:
        topics_reconcile_waiting()
