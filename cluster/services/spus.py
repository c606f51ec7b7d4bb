"""SPU use cases: register, unregister, connect (connection manager), status."""
from __future__ import annotations

from django.utils import timezone

from cluster.core.replication import intents
from cluster.core.spus import (SpuResolution, SpuType, admit_connection,
                               endpoint_problem, rack_problem, spu_id_problem)
from cluster.errors import Conflict, InvalidInput, NotFound
from cluster.models import Spu
from cluster.selectors.filters import topics_on_spus
from cluster.services.events import Actor, log_event, record_intent
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


def spu_register(*, spu_id: int, rack: str = "", public: str = "",
                 private: str = "", by: Actor = None) -> Spu:
    """Register a custom SPU; then re-evaluate topics waiting for SPUs (003).

    The log first (issue 32): the spu-register intent, whose projection is the row."""
    problem = _input_problem(spu_id, rack, public, private)
    if problem:
        raise InvalidInput(problem[1], field=problem[0])
    if Spu.objects.filter(pk=spu_id).exists():
        raise Conflict(f"SPU {spu_id} is already registered", field="id")
    record_intent(by, intents.spu_register(spu_id, rack, public or DEFAULT_PUBLIC,
                                           private or DEFAULT_PRIVATE))
    topics_reconcile_waiting()
    return Spu.objects.get(pk=spu_id)


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
    record_intent(by, intents.spu_unregister(spu_id, force))
    topics_reconcile_waiting()


def _topic_list(names: list[str], shown: int = 5) -> str:
    more = len(names) - shown
    text = ", ".join(names[:shown])
    return f"topic{'s' if len(names) > 1 else ''} {text}" + (f" and {more} more" if more > 0 else "")


def spu_update(*, spu_id: int, rack: str | None = None, public: str | None = None,
               private: str | None = None, by: Actor = None) -> Spu:
    """003's Modify SPU: a new rack or endpoints; None leaves a field as it is."""
    spu = Spu.objects.filter(pk=spu_id).first()
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
        record_intent(by, intents.spu_update(spu_id, changed))
        spu.refresh_from_db()
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


def spu_set_resolution(*, spu_id: int, resolution: SpuResolution,
                       by: Actor = "spu-controller") -> Spu:
    """The spu-status intent first; the store's projection writes the row from it."""
    spu = Spu.objects.filter(pk=spu_id).first()
    if spu is None:
        raise NotFound(f"SPU {spu_id} is not registered", field="id")
    if spu.resolution != resolution.value:
        record_intent(by, intents.spu_status(spu_id, spu.resolution, resolution.value))
    elif resolution is SpuResolution.ONLINE:
        # Not a change of state: only the heartbeat's time, which no entry carries.
        Spu.objects.filter(pk=spu_id).update(last_heartbeat=timezone.now())
    spu.refresh_from_db()
    return spu
