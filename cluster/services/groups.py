"""SPU-group use cases: create, scale, delete; each provisions managed SPUs."""
from __future__ import annotations

from django.db import transaction

from cluster.core.replication import intents
from cluster.core.spu_groups import (GroupResolution, default_min_id,
                                     group_input_problems, plan_group)
from cluster.core.spus import SpuResolution, SpuType
from cluster.errors import Conflict, InvalidInput, NotFound
from cluster.models import Spu, SpuGroup
from cluster.selectors.filters import topics_on_spus
from cluster.services.events import Actor, log_event, log_intent
from cluster.services.topics import topics_reconcile_waiting

CONTROLLER = "spg-controller"


@transaction.atomic
def spg_create(*, name: str, replicas: int, min_id: int | None = None,
               rack: str = "", storage_size: str = "1Gi",
               by: Actor = None) -> SpuGroup:
    """Store the group; Reserved with its SPUs, or Invalid when ids collide."""
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
    _provision(group)
    return group


@transaction.atomic
def spg_scale(*, name: str, replicas: int, force: bool = False,
              by: Actor = None) -> SpuGroup:
    """Scale up provisions new ids; down terminates the highest ids (003).

    Down is refused while an SPU it would terminate holds replicas, unless ``force``.
    """
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
    _provision(group)
    return group


@transaction.atomic
def spg_delete(*, name: str, by: Actor = None) -> None:
    group = _get(name)
    spu_ids = sorted(_owned(group))
    group.delete()  # its SPUs with it
    log_event(by, "spu-group", name, "delete", {"spus": spu_ids})
    for spu_id in spu_ids:
        log_intent(by, intents.spu_unregister(spu_id, forced=True))


def spg_reconcile_invalid() -> list[str]:
    """Invalid groups become Reserved once their id range is free again."""
    fixed = []
    for group in SpuGroup.objects.filter(resolution=GroupResolution.INVALID.value):
        with transaction.atomic():
            if _provision(group) is GroupResolution.RESERVED:
                fixed.append(group.name)
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


def _provision(group: SpuGroup) -> GroupResolution:
    plan = plan_group(group.min_id, group.replicas, _owned(group), _others(group))
    previous = group.resolution
    group.resolution, group.reason = plan.resolution.value, plan.reason
    group.save(update_fields=["resolution", "reason"])
    if previous != group.resolution:
        log_event(CONTROLLER, "spu-group", group.name, "resolution",
                  {"from": previous, "to": group.resolution}, result=plan.reason)
    if plan.remove:
        Spu.objects.filter(group=group, id__in=plan.remove).delete()
    added = Spu.objects.bulk_create([_managed_spu(group, spu_id) for spu_id in plan.add])
    for spu in added:
        log_event(CONTROLLER, "spu", spu.id, "provision", {"group": group.name})
        log_intent(CONTROLLER, intents.spu_register(spu.id, spu.rack, spu.public_endpoint,
                                                    spu.private_endpoint))
    for spu_id in plan.remove:
        log_event(CONTROLLER, "spu", spu_id, "terminate", {"group": group.name})
        log_intent(CONTROLLER, intents.spu_unregister(spu_id, forced=True))
    if plan.add:
        topics_reconcile_waiting()
    return plan.resolution


def _managed_spu(group: SpuGroup, spu_id: int) -> Spu:
    return Spu(id=spu_id, spu_type=SpuType.MANAGED.value, rack=group.rack,
               group=group, resolution=SpuResolution.INIT.value,
               public_endpoint=f"{group.name}-{spu_id}:9005",
               private_endpoint=f"{group.name}-{spu_id}:9006")
