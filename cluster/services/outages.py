"""Outages: take SPUs or whole racks offline and back, or kill an SPU's loop.

Each is logged first (issue 32): the outage intent, with who asked, then the SPUs'
``spu-status`` intents, whose projection is the store's status.
``offline`` / ``online`` change the SPU's status in the store, as the SC's
connection manager would; the next replication step turns that into the
core's SpuOffline / SpuOnline and the elections follow. ``kill`` stops the
SPU's loop without telling anyone: the connection manager notices when its
heartbeat stops. Each service only writes; ``settle_outage`` waits for (or,
with no worker, runs) the elections the change caused.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from cluster.adapters import hot_state
from cluster.core.replication import Resolution, intents
from cluster.core.spus import SpuResolution
from cluster.engine.engine import current as engine
from cluster.errors import NotFound
from cluster.models import Partition, Spu
from cluster.services.events import Actor, record_intent
from cluster.services.waiting import kick, wait_elections_settled, worker_running
from cluster.services.spus import spu_connect, spu_set_resolution


@dataclass(frozen=True)
class Elections:
    """What happened to the partitions an outage touched (read from the store).

    Going down, "touched" are the partitions the SPUs led; coming up, the
    leaderless partitions that had a replica on them.
    """
    touched: int
    elected: int
    offline: int

    @property
    def pending(self) -> int:
        return self.touched - self.elected - self.offline

    def as_json(self) -> dict[str, int]:
        return {"touched": self.touched, "elected": self.elected, "offline": self.offline,
                "pending": self.pending}


@dataclass(frozen=True)
class OutageResult:
    """An outage's change; ``settle_outage`` fills in ``settled`` and ``elections``."""
    spus: list[int]
    resolution: str
    settled: bool | None = None
    going_down: bool = True
    touched: tuple[int, ...] = ()
    elections: Elections | None = None
    # Set when the SPU already was as asked (a second tab's stale button): what to say,
    # and nothing was changed or logged.
    unchanged: str = ""

    def as_json(self) -> dict[str, object]:
        return {"spus": self.spus, "resolution": self.resolution, "settled": self.settled,
                "elections": self.elections.as_json() if self.elections else None}


def _down(ids: list[int], resolution: str) -> OutageResult:
    """Snapshot, before the change, the partitions the SPUs lead."""
    led = Partition.objects.filter(leader__in=ids).values_list("pk", flat=True)
    return OutageResult(ids, resolution, going_down=True, touched=tuple(led))


def _up(ids: list[int], resolution: str) -> OutageResult:
    """Snapshot, before the change, the leaderless partitions with a replica on the SPUs."""
    # replicas is a JSON list: filter in Python, the leaderless rows are few.
    rows = Partition.objects.filter(leader__isnull=True).values_list("pk", "replicas")
    wanted = set(ids)
    return OutageResult(ids, resolution, going_down=False,
                        touched=tuple(pk for pk, replicas in rows if wanted & set(replicas)))


def elections_after(result: OutageResult) -> Elections:
    """How the touched partitions stand now."""
    rows = list(Partition.objects.filter(pk__in=result.touched)
                .values_list("leader", "resolution"))
    if result.going_down:
        gone = set(result.spus)
        elected = sum(leader is not None and leader not in gone for leader, _ in rows)
        offline = sum(leader is None and res == Resolution.OFFLINE.value for leader, res in rows)
    else:
        elected = sum(leader is not None for leader, _ in rows)
        offline = len(rows) - elected
    return Elections(len(rows), elected, offline)


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
    if _existing(spu_id).resolution == SpuResolution.OFFLINE.value:
        return _as_it_was(spu_id, SpuResolution.OFFLINE.value,
                          f"SPU {spu_id} is already offline: nothing changed")
    result = _down([spu_id], SpuResolution.OFFLINE.value)
    record_intent(by, intents.outage("offline", [spu_id]))
    spu_set_resolution(spu_id=spu_id, resolution=SpuResolution.OFFLINE, by=by)
    return result


def spu_online(*, spu_id: int, by: Actor = None) -> OutageResult:
    """Restart the SPU's loop (if killed) and let it reconnect (003 connection setup)."""
    with engine().bound():  # the store's id read once for its four hot-state writes
        if (_existing(spu_id).resolution == SpuResolution.ONLINE.value
                and spu_id not in hot_state.killed()):
            return _as_it_was(spu_id, SpuResolution.ONLINE.value,
                              f"SPU {spu_id} is already online: nothing changed")
        result = _up([spu_id], SpuResolution.ONLINE.value)
        _revive([spu_id])
        record_intent(by, intents.outage("online", [spu_id]))
        _reconnect(spu_id)
        return result


def _revive(ids: list[int]) -> None:
    """Killed loops restart in the hot state before the intent is logged, as a kill stops
    them: the entry's projection writes the ``start`` event, and the live pages it
    announces read the killed set (restarting a loop changes no row)."""
    for spu_id in ids:
        hot_state.revive(spu_id)


def _reconnect(spu_id: int) -> None:
    """The restarted loop reconnects (003 connection setup)."""
    hot_state.forget_heartbeat(spu_id)
    spu_connect(spu_id=spu_id)


def spu_kill(*, spu_id: int, by: Actor = None) -> OutageResult:
    """Stop the SPU's loop silently; the store still says Online until the heartbeat lapses."""
    spu = _existing(spu_id)
    with engine().bound():
        if spu_id in hot_state.killed():
            return _as_it_was(spu_id, spu.resolution,
                              f"SPU {spu_id}'s loop is already killed: nothing changed")
        result = _down([spu_id], spu.resolution)
        # The loop stops in the hot state first: the intent's projection writes the kill's
        # event, and the live pages it announces read the killed set (a kill changes no row).
        hot_state.kill(spu_id)
        record_intent(by, intents.outage("kill", [spu_id]))
        return result


def _as_it_was(spu_id: int, resolution: str, message: str) -> OutageResult:
    return OutageResult([spu_id], resolution, settled=True, unchanged=message,
                        elections=Elections(0, 0, 0))


def rack_offline(*, rack: str, by: Actor = None) -> OutageResult:
    ids = _rack_spus(rack)
    return _rack_change(rack, _down(ids, SpuResolution.OFFLINE.value), by, lambda spu_id:
                        spu_set_resolution(spu_id=spu_id, resolution=SpuResolution.OFFLINE,
                                           by=by))


def rack_online(*, rack: str, by: Actor = None) -> OutageResult:
    ids = _rack_spus(rack)
    result = _up(ids, SpuResolution.ONLINE.value)
    _revive(ids)
    return _rack_change(rack, result, by, _reconnect)


def _rack_change(rack: str, result: OutageResult, by: Actor,
                 change: Callable[[int], object]) -> OutageResult:
    operation = "offline" if result.going_down else "online"
    # The operator's intent first (its projection writes the rack's event), then each SPU.
    record_intent(by, intents.outage(operation, result.spus, rack=rack))
    for spu_id in result.spus:
        change(spu_id)
    return result


def settle_outage(result: OutageResult, *, wait: bool = True, killed: bool = False,
                  timeout_s: float | None = None) -> OutageResult:
    """Elections caused by the change, finished: awaited, or run here when no worker runs.

    With ``wait`` False and a worker running, only nudge it (API requests).
    """
    if result.unchanged:
        return result
    if not wait and worker_running():
        kick()
        return replace(result, elections=elections_after(result))
    done = wait_elections_settled(result.spus, wait_offline=killed, timeout_s=timeout_s)
    return replace(result, resolution=_resolution(result.spus), settled=done,
                   elections=elections_after(result))


def _resolution(ids: list[int]) -> str:
    found = set(Spu.objects.filter(id__in=ids).values_list("resolution", flat=True))
    return found.pop() if len(found) == 1 else "mixed"
