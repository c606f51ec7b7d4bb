"""SPU use cases: register, unregister, connect (connection manager), status."""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from cluster.core.replication import intents
from cluster.core.spus import (SpuResolution, SpuType, admit_connection,
                               endpoint_problem, rack_problem, spu_id_problem)
from cluster.errors import Conflict, InvalidInput, NotFound
from cluster.models import Spu
from cluster.selectors.filters import topics_on_spus
from cluster.services.events import Actor, log_event, log_intent
from cluster.services.topics import topics_reconcile_waiting

# The SPU ports of 003's example spec.
DEFAULT_PUBLIC = "localhost:9005"
DEFAULT_PRIVATE = "localhost:9006"


def _input_problem(spu_id: int, rack: str, public: str, private: str
                   ) -> tuple[str, str] | None:
    checks = [("id", spu_id_problem(spu_id)),
              ("rack", rack_problem(rack) if rack else None),
              ("public", endpoint_problem(public, "public") if public else None),
              ("private", endpoint_problem(private, "private") if private else None)]
    return next(((f, m) for f, m in checks if m), None)


@transaction.atomic
def spu_register(*, spu_id: int, rack: str = "", public: str = "",
                 private: str = "", by: Actor = None) -> Spu:
    """Register a custom SPU; then re-evaluate topics waiting for SPUs (003)."""
    problem = _input_problem(spu_id, rack, public, private)
    if problem:
        raise InvalidInput(problem[1], field=problem[0])
    if Spu.objects.filter(pk=spu_id).exists():
        raise Conflict(f"SPU {spu_id} is already registered", field="id")
    spu = Spu.objects.create(id=spu_id, spu_type=SpuType.CUSTOM.value, rack=rack,
                             public_endpoint=public or DEFAULT_PUBLIC,
                             private_endpoint=private or DEFAULT_PRIVATE)
    log_event(by, "spu", spu_id, "register",
              {"rack": rack, "public": spu.public_endpoint, "private": spu.private_endpoint})
    log_intent(by, intents.spu_register(spu_id, rack, spu.public_endpoint, spu.private_endpoint))
    topics_reconcile_waiting()
    return spu


@transaction.atomic
def spu_unregister(*, spu_id: int, force: bool = False, by: Actor = None) -> None:
    """Refused while the SPU holds replicas (drain it first) unless ``force``."""
    spu = Spu.objects.filter(pk=spu_id).select_related("group").first()
    if spu is None:
        raise NotFound(f"SPU {spu_id} is not registered", field="id")
    if spu.spu_type == SpuType.MANAGED.value:
        raise Conflict(f"SPU {spu_id} is managed by SPU group {spu.group.name!r}; "
                       f"scale or delete the group instead", field="id")
    hosted = [] if force else topics_on_spus([spu_id]).get(spu_id, [])
    if hosted:
        raise Conflict(f"SPU {spu_id} still holds replicas of {_topic_list(hosted)}: drain it "
                       f"first (spu drain {spu_id}) or unregister with --force",
                       field="id", details={"topics": hosted})
    spu.delete()
    log_event(by, "spu", spu_id, "unregister", {"forced": force} if force else None)
    log_intent(by, intents.spu_unregister(spu_id, force))
    topics_reconcile_waiting()


def _topic_list(names: list[str], shown: int = 5) -> str:
    more = len(names) - shown
    text = ", ".join(names[:shown])
    return f"topic{'s' if len(names) > 1 else ''} {text}" + (f" and {more} more" if more > 0 else "")


@transaction.atomic
def spu_update(*, spu_id: int, rack: str | None = None, public: str | None = None,
               private: str | None = None, by: Actor = None) -> Spu:
    """003's Modify SPU: a new rack or endpoints; None leaves a field as it is."""
    spu = Spu.objects.select_for_update().filter(pk=spu_id).first()
    if spu is None:
        raise NotFound(f"SPU {spu_id} is not registered", field="id")
    wanted = {"rack": spu.rack if rack is None else rack,
              "public_endpoint": public or spu.public_endpoint,
              "private_endpoint": private or spu.private_endpoint}
    problem = _input_problem(spu_id, wanted["rack"], wanted["public_endpoint"],
                             wanted["private_endpoint"])
    if problem:
        raise InvalidInput(problem[1], field=problem[0])
    changed = {k: {"from": getattr(spu, k), "to": v} for k, v in wanted.items()
               if getattr(spu, k) != v}
    if changed:
        Spu.objects.filter(pk=spu_id).update(**{k: c["to"] for k, c in changed.items()})
        spu.refresh_from_db()
        log_event(by, "spu", spu_id, "update", changed)
        log_intent(by, intents.spu_update(spu_id, changed))
        topics_reconcile_waiting()
    return spu


def spu_connect(*, spu_id: int) -> Spu:
    """Connection manager: admit a registered SPU and mark it Online.

    Not atomic as a whole: a refusal must stay in the audit log even
    though the connection itself is refused.
    """
    registered = set(Spu.objects.filter(pk=spu_id).values_list("id", flat=True))
    refusal = admit_connection(spu_id, registered)
    if refusal:
        log_event("connection-manager", "spu", spu_id, "connect-refused", result=refusal)
        raise NotFound(refusal, field="id")
    return spu_set_resolution(spu_id=spu_id, resolution=SpuResolution.ONLINE,
                              by="connection-manager")


@transaction.atomic
def spu_set_resolution(*, spu_id: int, resolution: SpuResolution,
                       by: Actor = "spu-controller") -> Spu:
    spu = Spu.objects.select_for_update().filter(pk=spu_id).first()
    if spu is None:
        raise NotFound(f"SPU {spu_id} is not registered", field="id")
    previous = spu.resolution
    spu.resolution = resolution.value
    if resolution is SpuResolution.ONLINE:
        spu.last_heartbeat = timezone.now()
    spu.save(update_fields=["resolution", "last_heartbeat"])
    if previous != resolution.value:
        log_event(by, "spu", spu_id, "resolution",
                  {"from": previous, "to": resolution.value})
        log_intent(by, intents.spu_status(spu_id, previous, resolution.value))
    return spu
