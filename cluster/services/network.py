"""Network partitions: cut and heal links, read the cuts in force and the rehearsal's report.

A cut is control-plane state (``core.links``): each use case is one unit of
work of the engine that changes the cuts and appends its ``net-cut`` /
``net-heal`` entry (who did it included) in the same fenced write. What the
cut then does (heartbeats lost, the session expiring, a deposed leader taking
writes, truncations on rejoin) the engine's ticks decide through the core.
``net_step`` runs those ticks here when no worker does, as ``produce`` does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cluster.adapters import hot_state
from cluster.core.replication import ReplicationError, ledger, links, netview
from cluster.core.spus import SpuResolution
from cluster.engine.engine import current as engine
from cluster.engine.unit import now_ms
from cluster.errors import InvalidInput, NotFound
from cluster.models import Spu
from cluster.services.events import Actor, actor_name
from cluster.services.replication import replication_tick
from cluster.services.waiting import (LocalQueue, elections_settled, kick, wait_until,
                                      worker_running)

SOURCES = ("controller", "spu", "producers")


@dataclass(frozen=True)
class CutRequest:
    """What an operator asked: ``spu`` from ``source`` (``peer`` for spu), or a rack split."""
    spu: int | None = None
    source: str = "controller"
    peer: int | None = None
    racks: str | None = None
    one_way: bool = False
    inbound: bool = False  # with one_way: drop what the SPU is sent instead of what it sends


def _registered(spu: int, field: str) -> None:
    if not Spu.objects.filter(pk=spu).exists():
        raise NotFound(f"SPU {spu} is not registered", field=field)


def _rack_groups(text: str) -> list[list[str]]:
    """``a,b`` splits rack a from rack b; ``a+b,c`` racks a and b from c; ``a`` a from the rest."""
    groups = [[r.strip() for r in g.split("+") if r.strip()] for g in text.split(",")]
    if not 1 <= len(groups) <= 2 or any(not g for g in groups):
        raise InvalidInput("--racks takes one or two rack groups: A,B or A+B,C", field="racks")
    return groups


def _rack_split(text: str) -> links.CutLinks:
    """The smaller group is cut from the other group named (from every other rack when
    one is named); the SC sits with the larger (and with racks not named)."""
    groups = _rack_groups(text)
    rows = list(Spu.objects.values_list("id", "rack"))
    known = {rack for _, rack in rows if rack}
    for rack in (r for g in groups for r in g):
        if rack not in known:
            raise NotFound(f"no SPU is in rack {rack!r}", field="racks")
    sides = [sorted(s for s, rack in rows if rack in g) for g in groups]
    if len(sides) == 2 and len(sides[1]) < len(sides[0]):
        sides.reverse()
        groups.reverse()
    side = sides[0]
    rest = sides[1] if len(sides) == 2 else sorted(s for s, _ in rows if s not in side)
    if not rest or set(side) & set(rest):
        raise InvalidInput("the racks named must be two apart groups, and leave an SPU on "
                           "the other side", field="racks")
    names = ["+".join(g) for g in groups] + (["the rest"] if len(groups) == 1 else [])
    return links.CutLinks("racks", tuple(side), tuple(rest), False, tuple(names))


def _spu_cut(req: CutRequest) -> links.CutLinks:
    if req.spu is None:
        raise InvalidInput("give --spu N or --racks A,B", field="spu")
    _registered(req.spu, "spu")
    if req.source not in SOURCES:
        raise InvalidInput(f"--from is one of controller, spu M, producers; not {req.source!r}",
                           field="from")
    if req.inbound and not req.one_way:
        raise InvalidInput("--inbound goes with --one-way: a cut both ways has no direction",
                           field="inbound")
    if req.source != "spu":
        return links.CutLinks(req.source, (req.spu,), (), req.one_way, inbound=req.inbound)
    if req.peer is None or req.peer == req.spu:
        raise InvalidInput("--from spu needs another SPU's id", field="from")
    _registered(req.peer, "from")
    return links.CutLinks("spu", (req.spu,), (req.peer,), req.one_way, inbound=req.inbound)


def cut_request(req: CutRequest) -> links.CutLinks:
    """The core's event for an operator's request; bad input raises before anything runs."""
    if req.racks is not None:
        if req.spu is not None or req.one_way or req.inbound:
            raise InvalidInput("--racks goes alone (a rack split is both ways)", field="racks")
        return _rack_split(req.racks)
    return _spu_cut(req)


def net_cut(*, request: CutRequest, by: Actor = None) -> dict[str, Any]:
    """Put a cut in force (one unit of work: the cut and its log entry)."""
    wanted = cut_request(request)
    with engine().unit(whole=True) as u:
        ev = links.CutLinks(wanted.kind, wanted.spus, wanted.peers, wanted.one_way,
                            wanted.racks, u.at, wanted.inbound)
        try:
            cut = links.cut_links(u.state.state, ev)
        except ReplicationError as exc:
            raise InvalidInput(str(exc), field="spu") from None
        u.log({**links.cut_entry(cut), "by": actor_name(by)})
    return links.cut_fields(cut)


def net_heal(*, cut_id: int | None = None, heal_all: bool = False,
             by: Actor = None) -> dict[str, Any]:
    """Heal one cut (by id; the latest without one) or every cut; rejoining SPUs are
    fenced by the newer epochs and what they lose is reported (``net_report``)."""
    with engine().unit(whole=True) as u:
        state = u.state.state
        if not state.cuts:
            raise InvalidInput("no cut is in force", field="id")
        target = None if heal_all else (cut_id if cut_id is not None else state.cuts[-1].id)
        try:
            healed = links.heal(state, target)
        except ReplicationError as exc:
            raise NotFound(str(exc), field="id") from None
        for entry in links.heal_entries(healed.cuts, healed.rejoined):
            u.log({**entry, "by": actor_name(by)} if entry["type"] == "net-heal" else entry)
        u.actions += healed.actions
    return {"healed": [links.cut_fields(c) for c in healed.cuts],
            "rejoined": healed.rejoined, "in_force": len(state.cuts)}


def _meta_state():
    return hot_state.load(keys=[]).state


def net_status() -> list[dict[str, Any]]:
    """The cuts in force, each naming its SPUs or racks (empty when healed)."""
    return [links.cut_fields(c) for c in _meta_state().cuts]


def net_report() -> dict[str, Any] | None:
    """The latest rehearsal's accounting (None before the first cut)."""
    return ledger.report(_meta_state(), now_ms())


def net_matrix() -> dict[str, Any]:
    """Who can reach whom, for the pages: one row per SPU, a column per other end."""
    return netview.matrix(_meta_state())


def net_view() -> dict[str, Any]:
    """The matrix and the rehearsal's summary, as live messages carry them (``net``)."""
    return netview.view(_meta_state(), now_ms())


def net_step(*, settle_s: float = 0.0) -> bool:
    """Run the engine after a cut or heal: nudge the worker, or tick here when none runs.

    With ``settle_s`` wait (up to that long) until every SPU whose heartbeats are cut
    is offline in the store and no election is running."""
    if settle_s <= 0:
        if worker_running():
            kick()
        else:
            replication_tick(dispatch=LocalQueue())
        return True
    return wait_until(_settled, timeout_s=settle_s)


def _settled() -> bool:
    state = _meta_state()
    silent = [s for s, up in state.spus.items() if up and not links.beats(state, s)]
    online = set(Spu.objects.filter(resolution=SpuResolution.ONLINE.value)
                 .values_list("id", flat=True))
    rejoined = [s for s in state.spus if state.spus[s] and s not in online]
    return not silent and not rejoined and elections_settled()
