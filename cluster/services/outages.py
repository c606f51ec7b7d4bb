"""Outages: take SPUs or whole racks offline and back, or kill an SPU's loop.

``offline`` / ``online`` change the SPU's status in the store, as the SC's
connection manager would; the next replication step turns that into the
core's SpuOffline / SpuOnline and the elections follow. ``kill`` stops the
SPU's loop without telling anyone: the connection manager notices when its
heartbeat stops. Each service only writes; ``settle_outage`` waits for (or,
with no worker, runs) the elections the change caused.
"""
from __future__ import annotations

from dataclasses import dataclass

from cluster import hot_state
from cluster.core.spus import SpuResolution
from cluster.errors import NotFound
from cluster.models import Spu
from cluster.services.events import Actor, log_event
from cluster.services.settle import kick, settle_elections, worker_running
from cluster.services.spus import spu_connect, spu_set_resolution


@dataclass(frozen=True)
class OutageResult:
    spus: list[int]
    resolution: str
    settled: bool | None = None

    def as_json(self) -> dict[str, object]:
        return {"spus": self.spus, "resolution": self.resolution, "settled": self.settled}


def _existing(spu_id: int) -> Spu:
    spu = Spu.objects.filter(pk=spu_id).first()
    if spu is None:
        raise NotFound(f"SPU {spu_id} is not registered", field="id")
    return spu


def _rack_spus(rack: str) -> list[int]:
    ids = list(Spu.objects.filter(rack=rack).order_by("id").values_list("id", flat=True))
    if not ids:
        raise NotFound(f"no SPU is in rack {rack!r}", field="rack")
    return ids


def spu_offline(*, spu_id: int, by: Actor = None) -> OutageResult:
    _existing(spu_id)
    spu_set_resolution(spu_id=spu_id, resolution=SpuResolution.OFFLINE, by=by)
    return OutageResult([spu_id], SpuResolution.OFFLINE.value)


def spu_online(*, spu_id: int, by: Actor = None) -> OutageResult:
    """Restart the SPU's loop (if killed) and let it reconnect (003 connection setup)."""
    _existing(spu_id)
    hot_state.revive(spu_id)
    hot_state.forget_heartbeat(spu_id)
    log_event(by, "spu", spu_id, "start")
    spu_connect(spu_id=spu_id)
    return OutageResult([spu_id], SpuResolution.ONLINE.value)


def spu_kill(*, spu_id: int, by: Actor = None) -> OutageResult:
    """Stop the SPU's loop silently; the store still says Online until the heartbeat lapses."""
    spu = _existing(spu_id)
    hot_state.kill(spu_id)
    log_event(by, "spu", spu_id, "kill")
    return OutageResult([spu_id], spu.resolution)


def rack_offline(*, rack: str, by: Actor = None) -> OutageResult:
    ids = _rack_spus(rack)
    log_event(by, "rack", rack, "offline", {"spus": ids})
    for spu_id in ids:
        spu_set_resolution(spu_id=spu_id, resolution=SpuResolution.OFFLINE, by=by)
    return OutageResult(ids, SpuResolution.OFFLINE.value)


def rack_online(*, rack: str, by: Actor = None) -> OutageResult:
    ids = _rack_spus(rack)
    log_event(by, "rack", rack, "online", {"spus": ids})
    for spu_id in ids:
        spu_online(spu_id=spu_id, by=by)
    return OutageResult(ids, SpuResolution.ONLINE.value)


def settle_outage(result: OutageResult, *, wait: bool = True, killed: bool = False,
                  timeout_s: float | None = None) -> OutageResult:
    """Elections caused by the change, finished: awaited, or run here when no worker runs.

    With ``wait`` False and a worker running, only nudge it (API requests).
    """
    if not wait and worker_running():
        kick()
        return result
    done = settle_elections(result.spus, wait_offline=killed, timeout_s=timeout_s)
    return OutageResult(result.spus, _resolution(result.spus), done)


def _resolution(ids: list[int]) -> str:
    found = set(Spu.objects.filter(id__in=ids).values_list("resolution", flat=True))
    return found.pop() if len(found) == 1 else "mixed"
