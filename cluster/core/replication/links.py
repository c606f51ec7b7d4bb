"""Links that can fail: network cuts between SPUs, the SC and producers (004's partitions).

004 promises availability through node failures but not through network
partitions; this module says what each cut does, the Kafka way. The nodes are
the SC (``CONTROLLER``), the producers (``PRODUCERS``) and every SPU; a cut
(``state.Cut``) blocks messages between one group of SPUs and another end,
both ways or (``one_way``) only what the group sends, or (``one_way`` and
``inbound``) only what it is sent.

* Session (SPU -> SC heartbeats): an SPU whose heartbeats cannot reach the SC
  stops beating (``beats``); once the SC's timeout passes the shell feeds
  ``SessionExpired`` and the SC declares it offline like a crash: its
  partitions elect from the LRS (``election``). It still runs, so it is kept
  in ``state.expired`` and rejoins when the cut heals (``heal``).
* A leader that cannot hear the SC either never learns it was deposed: it
  stays leader in its own eyes for the epoch it had (``ReplicaSet.deposed``)
  and producers that reach it keep writing there (``partitions_net``). With a
  one-way cut (the SC still reaches it) it hears the new epoch at once and
  steps down, taking no write after its session expired; the acks=1 records
  it appended after its followers' last fetch before then stay a divergent
  tail for the whole cut (offline to the SC, it fetches from nobody) and are
  cut and reported at the heal, as after a leader crash.
* An SPU that cannot hear the SC but whose heartbeats still reach it (an
  inbound one-way cut) keeps its session: it is not declared offline. It
  answers no notice (``silenced``), so it is never elected meanwhile, and it
  cannot learn a new leader epoch: in a set whose leader changes it keeps the
  epoch it knew (``ReplicaSet.unaware``), is not aligned and fetches from
  nobody, so it leaves the LRS by the lag rule and catches up after the heal.
  Where it leads and nothing moves, it goes on leading: its followers fetch
  from it (SPU links are not cut) and the SC hears its LRS reports.
* Leader epochs fence it: when it rejoins, its log is cut where it diverges
  from the leader of the newer epoch (KIP-101: by epoch, not by its own HW),
  and every record cut is reported with its offset (``ReplicaTruncated.records``).
* SPU <-> SPU: a fetch needs both directions; a follower cut from its leader
  stops fetching, leaves the LRS by the lag rule (``sync``) and catches up
  after the heal.
* An SPU that cannot exchange with the SC answers no candidate notice
  (``silenced``): its election waits for the timer and moves on.
* Producers <-> SPU: a write to a leader the producers cannot reach is refused
  (``NETWORK_EXCEPTION``), counted as unavailability.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from cluster.core.spus import SpuResolution

from . import ledger
from .election import spu_offline, spu_online
from .events import Action
from .reach import (CONTROLLER, PRODUCERS, beats, blocked, blocked_pairs,  # noqa: F401
                    fetch_cut, hears_controller, producers_reach, silenced)
from .state import ClusterState, Cut, ReplicationError

KINDS = (CONTROLLER, PRODUCERS, "spu", "racks")


@dataclass(frozen=True, slots=True)
class CutLinks:
    """Operator: cut ``spus`` from the other end (see ``state.Cut``)."""
    kind: str
    spus: tuple[int, ...]
    peers: tuple[int, ...] = ()
    one_way: bool = False
    racks: tuple[str, ...] = ()
    now_ms: int = 0
    inbound: bool = False  # with one_way: drop what the SPUs are sent, not what they send


@dataclass(frozen=True, slots=True)
class HealLinks:
    """Operator: heal one cut (by id) or, with None, every cut."""
    cut_id: int | None = None


@dataclass(frozen=True, slots=True)
class SessionExpired:
    """The SC's session timeout passed for an SPU it hears no heartbeat from."""
    spu: int
    running: bool = True


# ---- cuts and heals -----------------------------------------------------------------

def _validated(state: ClusterState, ev: CutLinks) -> None:
    if ev.kind not in KINDS:
        raise ReplicationError(f"a cut is from one of {', '.join(KINDS)}, not {ev.kind!r}")
    if not ev.spus:
        raise ReplicationError("a cut needs at least one SPU on its side")
    unknown = sorted({*ev.spus, *ev.peers} - state.spus.keys())
    if unknown:
        raise ReplicationError(f"unknown SPU(s) {unknown}")
    if ev.kind in ("spu", "racks") and (not ev.peers or set(ev.spus) & set(ev.peers)):
        raise ReplicationError("the two sides of a cut must be non-empty and apart")
    if ev.inbound and not ev.one_way:
        raise ReplicationError("an inbound cut is one-way (--one-way --inbound)")


def cut_links(state: ClusterState, ev: CutLinks) -> Cut:
    """Put a cut in force; sessions it breaks expire later, by the SC's timeout."""
    _validated(state, ev)
    cut = Cut(state.next_cut_id, ev.kind, tuple(ev.spus), tuple(ev.peers), ev.one_way,
              tuple(ev.racks), ev.now_ms, ev.inbound)
    state.next_cut_id += 1
    state.cuts.append(cut)
    state._blocked = None
    ledger.begin(state, ev.now_ms, label(cut))
    return cut


class Healed(NamedTuple):
    cuts: list[Cut]
    rejoined: list[int]
    actions: list[Action]


def heal(state: ClusterState, cut_id: int | None = None) -> Healed:
    """Remove one cut (or all); SPUs whose session works again rejoin."""
    healed = [c for c in state.cuts if cut_id is None or c.id == cut_id]
    if cut_id is not None and not healed:
        raise ReplicationError(f"no cut {cut_id} is in force")
    state.cuts = [c for c in state.cuts if c not in healed]
    state._blocked = None
    actions: list[Action] = []
    back = [s for s in sorted(state.expired) if beats(state, s) and hears_controller(state, s)]
    for spu in back:
        actions += rejoin(state, spu)
    for rs in state.replica_sets.values():
        if rs.unaware:  # they hear the SC again: they learn the epoch and fetch (``sync``)
            for spu in [s for s in rs.unaware if hears_controller(state, s)]:
                del rs.unaware[spu]
    ledger.healed(state, state.clock_ms)
    return Healed(healed, back, actions)


# ---- the session rule ------------------------------------------------------------------

def session_expired(state: ClusterState, spu: int, running: bool = True) -> list[Action]:
    """The SC declares the SPU offline; a leader that cannot hear it goes on leading."""
    if not state.spus.get(spu):
        return []
    led = {rs.key: rs.epoch for rs in state.sets_of(spu) if rs.leader == spu}
    actions = spu_offline(state, spu)
    if not running:
        return actions
    state.expired[spu] = state.clock_ms
    if not hears_controller(state, spu):
        for key, epoch in led.items():
            state.replica_sets[key].deposed[spu] = epoch
    return actions


def rejoin(state: ClusterState, spu: int) -> list[Action]:
    """An SPU back in touch learns the current epochs: what it wrote as a deposed
    leader is cut where it diverges from the newer epoch's log, and reported."""
    state.expired.pop(spu, None)
    hears = hears_controller(state, spu)
    for rs in state.sets_of(spu):
        rs.deposed.pop(spu, None)
        if hears:
            rs.unaware.pop(spu, None)
    return spu_online(state, spu)


def spu_back(state: ClusterState, spu: int) -> list[Action]:
    """``SpuOnline`` from anywhere (an operator, the store): the SPU learns the epochs."""
    return rejoin(state, spu)


# ---- metadata-log entries ------------------------------------------------------------

def cut_fields(cut: Cut) -> dict[str, Any]:
    """A cut as ``net status --json`` and the log show it."""
    return {"id": cut.id, "kind": cut.kind, "spus": list(cut.spus), "peers": list(cut.peers),
            "racks": list(cut.racks), "one_way": cut.one_way, "inbound": cut.inbound,
            "since_ms": cut.since_ms, "label": label(cut)}


def label(cut: Cut) -> str:
    spus = ",".join(map(str, cut.spus))
    arrow = (" <-/- " if cut.inbound else " -/-> ") if cut.one_way else " -/- "
    if cut.kind == "racks":
        names = [*cut.racks, "the rest"] if cut.racks else [f"of SPUs {spus}", "the rest"]
        return f"racks {names[0]}{arrow}{names[1]}"
    if cut.kind == "spu":
        return f"SPU {spus}{arrow}SPU {','.join(map(str, cut.peers))}"
    return f"SPU {spus}{arrow}{cut.kind}"


def cut_entry(cut: Cut) -> dict[str, Any]:
    return {"type": "net-cut", **cut_fields(cut)}


def heal_entries(healed: list[Cut], back: list[int]) -> list[dict[str, Any]]:
    """The heal, then one ``spu`` entry per SPU it brought back (the store row follows)."""
    out: list[dict[str, Any]] = [{"type": "net-heal", "cuts": [cut_fields(c) for c in healed],
                                  "rejoined": back}]
    out += [{"type": "spu", "spu": s, "resolution": SpuResolution.ONLINE.value,
             "from": SpuResolution.OFFLINE.value, "by": "network"} for s in back]
    return out
