"""Steady replica sets: the ones a fetch round would leave as they are.

A set is *steady* when it is Online with a leader, every replica's SPU is online
and its loop live, the LRS is every replica, no move, acks=all write, deposed or
unaware replica is pending, and every replica holds the leader's log (same log
start, LEO and last record) with HW = LEO on every replica. For such a set a
fetch round (``sync.replication_step``) changes one thing only: each follower's
caught-up clock becomes the round's time. Most sets of a running cluster are
steady at most ticks, and passing over each of them every tick (the round, then
the save's encoding to compare with what is stored) was the whole cost of a
quiet tick: 5.7 us a set, whether anything happened to it or not.

**With an SPU down** (an outage rehearsal): a set whose replica on an offline SPU is out
of the LRS, the rest as above, is steady too (``sync._is_steady``). That replica neither
fetches nor is judged while its SPU is offline, so the round leaves it as it is, clock
included: the index's clock stands for the LRS followers' only, and the levelling skips
it. The SPU's return changes its status, which takes its sets out (below). At 100,000
partitions with one SPU of 50 down, that is 6,000 sets a tick no longer visited.

``Steady`` is an index of the steady sets kept beside ``ClusterState.replica_sets``
(not stored: a freshly loaded state starts empty and the next round fills it). The
round skips the sets in it and remembers only its own time (``round_ms``); a set
leaves the index when any rule touches it (``leave``), and its followers' clocks are
then set to the last round's time, the value the rounds it skipped would have left.
So the index is an encoding of the same state, never another rule: the fault
schedules run with and without it and compare every set after every step
(tests/unit/cluster/core/replication/test_steady_sets.py).

The round's side (what is steady, what a round must look at again) lives in
``sync``; this module is the index alone and imports nothing of the core.

**Appended to and still steady** (the first step of the columnar tier,
docs/engine-throughput.md): acks=0/1 appends by the simulated producers
(``produce.produce_spread``) to a steady set keep it in the index, marked ``appended``:
they extend the leader's log and nothing else (an append judges no lag and moves no
HW while the followers have not fetched), and the next round brings the followers
level, sets every HW to the leader's LEO and leaves the LRS as it is
(``sync._level_appended``): what the full rules do to such a set, without them. So a
set written to at every tick stays in the index, and the scans that skip steady sets
(elections, deadlines, moves) skip it too: it has none of those.

Who calls ``leave``: the state's own accessors (``ClusterState.replica_set``,
``sets_of``), every rule that changes a set's offsets or LRS (``sync.leader_update``,
``sync.follower_fetch``, the producers' append, a leadership transfer, a notice
delivered), and the shells that replace or restore a set. The round itself drops the
sets of an SPU whose status or loop changed since the index was built, and the whole
index while a network cut is in force (who reaches whom then changes without a set
being touched).

**Followers not kept while steady** (the columnar tier's retained ids as one run a set):
in a steady set every LRS follower holds the leader's log up to the set's HW, from the
same start, with HW = LEO, so its log is a copy of the leader's head. ``enter`` drops
those copies (the follower's ``log`` becomes ``LAZY``, an empty tuple: an append to it
fails loudly), ``leave`` rebuilds them from the leader's log, and readers that look at a
set without taking it out read ``view(rs)``. The round then has nothing to write in a
steady set: its levelling of the sets the producers appended to is a move of their keys
to ``levelled`` (their HW is the leader's LEO from then on, ``view``), and the HW fields
are written by whoever touches the set next (the producers' append, the save's
``settle_levels``, ``leave``). At 100,000 partitions this held two thirds of the retained
ids (6.7 GB with full logs) and was most of the round.

**The index must travel with its sets.** A set in the index is only whole together with
it: a shell that keeps sets apart from their index (set_cache.py) takes them out first
(``leave_all``), and one that drops the index drops its sets too.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from itertools import filterfalse
from typing import Any, Protocol

# state.Key; this module imports nothing of the core (state.py imports it).
Key = tuple[str, int]

# The log of an LRS follower of a steady set: not kept (its truth is the leader's log up to
# the set's HW, ``view``). Immutable, so a rule that appends to it without taking the set
# out of the index fails at once instead of writing into a log nobody reads.
LAZY: Any = ()


class ReplicaSet(Protocol):
    """What the index reads and writes of a ``state.ReplicaSet``."""
    topic: str
    partition: int
    leader: int | None
    replica: dict[int, Any]
    replicas: list[int]
    lrs: list[int]
    hw: int


@dataclass(slots=True)
class Steady:
    """The steady sets by key (an insertion-ordered set), the others (``active``), which
    steady ones the shell's save encoded since they became steady (``saved``: their
    stored bytes are their bytes; ``fresh``: not yet), and what the rounds need."""
    keys: dict[Key, None] = field(default_factory=dict)
    # ``saved``, ``fresh`` and ``appended`` hold keys of ``keys`` only (``_out`` takes a key
    # out of all of them): the round and the producers read "as many as ``keys``" as
    # "every steady set" (sync._level_appended, produce._append_steady).
    saved: set[Key] = field(default_factory=set)
    fresh: dict[Key, None] = field(default_factory=dict)
    # Steady sets the producers appended to since the last round (``produce_spread``): the
    # leader is ahead of the followers by those records; the next round levels them.
    appended: dict[Key, None] = field(default_factory=dict)
    # Steady sets a round levelled whose HW fields (the set's and its leader's) are not
    # written yet: their HW is the leader's LEO (``view``). Never in ``appended`` too.
    levelled: dict[Key, None] = field(default_factory=dict)
    # Steady sets whose LRS is the leader alone (the others' SPUs offline): an append
    # commits at once (the producers' append asks this, not each set's LRS).
    sole: dict[Key, None] = field(default_factory=dict)
    # The loaded sets that are not steady, in the order they left or arrived (None: not
    # known). Kept so a round, an election scan or a save visits those only; checked by
    # count against the loaded sets (``unsteady_keys``) and rebuilt when it is off.
    active: dict[Key, None] | None = None
    # The time of the last round that skipped them (None: no round with a clock did).
    round_ms: int | None = None
    # The SPUs' status and the stopped loops the index was built under.
    spus: dict[int, bool] = field(default_factory=dict)
    stopped: frozenset[int] = frozenset()
    # False: the index is off (the reference runs of the proof test); nothing enters it.
    enabled: bool = True
    # What the shell's save held when it marked sets saved (its compaction's retention):
    # a save under another must look at every set again.
    saved_under: object = None
    # What the shell's save keeps of a steady set while it stays in (its encoding's parts
    # that no round or append moves, adapters/steady_codec.py): dropped when it leaves, so
    # a key here is in ``keys`` (the save asks this one table of most sets).
    memo: dict[Key, object] = field(default_factory=dict)
    # The sets that entered since the last ``mark`` (the shell's save marks once it has
    # summed up the sets): a set in ``keys`` and not here has stayed in since that save, so
    # its leader, LRS, resolution, epoch and replicas are the ones that save saw.
    joined: dict[Key, None] = field(default_factory=dict)

    def enter(self, key: Key, rs: ReplicaSet) -> None:
        """``rs`` (under ``key``) is steady: into the index, its LRS followers' logs
        dropped (``LAZY``; ``leave`` rebuilds them)."""
        for _, r in self._followers(rs):
            r.log = LAZY
        if len(rs.lrs) == 1:
            self.sole[key] = None
        self.keys[key] = None
        self.joined[key] = None
        self.memo.pop(key, None)
        self.fresh[key] = None
        if self.active is not None:
            self.active.pop(key, None)

    def leave(self, rs: ReplicaSet) -> None:
        """``rs`` is about to change: out of the index, its followers' clocks as the
        rounds it skipped would have left them."""
        key = (rs.topic, rs.partition)
        if key in self.keys:
            levelled = key in self.levelled
            self._out(key)
            self._restore(rs, levelled)

    def leave_key(self, sets: Mapping[Key, ReplicaSet], key: Key) -> None:
        if key in self.keys:
            levelled = key in self.levelled
            self._out(key)
            rs = sets.get(key)
            if rs is not None:
                self._restore(rs, levelled)

    def leave_all(self, sets: Mapping[Key, ReplicaSet]) -> None:
        for key in list(self.keys):
            self.leave_key(sets, key)

    def drop(self, key: Key, *, gone: bool = False) -> None:
        """The set under ``key`` is replaced by another (or ``gone``): forget it, no clocks."""
        self.memo.pop(key, None)
        if key in self.keys:
            self._out(key)
        if gone and self.active is not None:
            self.active.pop(key, None)

    def _out(self, key: Key) -> None:
        del self.keys[key]
        self.joined.pop(key, None)
        self.saved.discard(key)
        self.fresh.pop(key, None)
        self.appended.pop(key, None)
        self.levelled.pop(key, None)
        self.sole.pop(key, None)
        self.memo.pop(key, None)
        if self.active is not None:
            self.active[key] = None

    @staticmethod
    def _followers(rs: ReplicaSet) -> list[tuple[int, Any]]:
        """The replicas (by SPU) whose state the index keeps for them: the LRS followers
        (a replica out of the LRS, its SPU offline, is not judged and keeps its own)."""
        leader, lrs, rep = rs.leader, rs.lrs, rs.replica
        whole = len(lrs) == len(rep)
        return [(s, r) for s, r in rep.items() if s != leader and (whole or s in lrs)]

    @staticmethod
    def _level(rs: ReplicaSet) -> int:
        """Write the HW a round levelled ``rs`` to (its leader's LEO) into it."""
        lead = rs.replica[rs.leader]  # type: ignore[index]
        rs.hw = lead.hw = lead.start + len(lead.log)
        return rs.hw

    def _restore(self, rs: ReplicaSet, levelled: bool) -> None:
        """Write what the index kept for ``rs`` into it: the HW a round levelled it to,
        its LRS followers' logs (the leader's up to HW), HW and clocks as the rounds it
        skipped would have left them."""
        lead = rs.replica.get(rs.leader)  # type: ignore[arg-type]
        if lead is None:  # changed behind the index's back (a shell's restore): as it is
            return
        hw = self._level(rs) if levelled else rs.hw
        start, at = lead.start, self.round_ms
        for _, r in self._followers(rs):
            r.log = lead.log[:hw - start]
            r.start, r.hw = start, hw
            if at is not None:
                r.caught_up_ms = at

    def settle_levels(self, sets: Mapping[Key, ReplicaSet]) -> None:
        """Write the HW of every set a round levelled (before a pass that reads them)."""
        for key in self.levelled:
            rs = sets.get(key)
            if rs is not None:
                self._level(rs)
        self.levelled = {}

    def view(self, rs: ReplicaSet) -> Any:
        """``rs`` as it stands, whole: itself unless it is steady, else a copy with what
        the index keeps for it written in (for readers that must not take it out): the HW
        a round levelled it to, and its LRS followers as ``leave`` would rebuild them."""
        key = (rs.topic, rs.partition)
        if key not in self.keys or rs.leader not in rs.replica:
            return rs
        lead = rs.replica[rs.leader]
        hw = lead.start + len(lead.log) if key in self.levelled else rs.hw
        start, at = lead.start, self.round_ms
        replica = dict(rs.replica)
        replica[rs.leader] = replace(lead, hw=hw)
        for s, r in self._followers(rs):
            replica[s] = replace(r, log=lead.log[:hw - start], start=start, hw=hw,
                                 caught_up_ms=r.caught_up_ms if at is None else at)
        return replace(rs, replica=replica, hw=hw)  # type: ignore[type-var]

    def view_offsets(self, rs: ReplicaSet) -> tuple[int, tuple[tuple[int, int, int], ...]] | None:
        """What ``view(rs)`` would give of its offsets, without the copy: its HW and each
        replica's (SPU, LEO, HW) in ``rs.replicas`` order; None when ``rs`` is not steady
        (it stands as it is). A pass over every set's summary (the store's resync, the HW
        checkpoints) spent most of its time in ``view``'s replaced copies: 340,000 of them
        at 100,000 partitions."""
        key = (rs.topic, rs.partition)
        rep, leader = rs.replica, rs.leader
        if key not in self.keys or leader not in rep:
            return None
        lead = rep[leader]  # type: ignore[index]
        start, length = lead.start, len(lead.log)
        hw = start + length if key in self.levelled else rs.hw
        # A follower's log in the view is ``lead.log[:hw - start]``: its length, as sliced.
        cut = hw - start
        follower_leo = start + (min(cut, length) if cut >= 0 else max(0, length + cut))
        lrs, whole = rs.lrs, len(rs.lrs) == len(rep)
        out = []
        for s in rs.replicas:
            if s == leader:
                out.append((s, start + length, hw))
            elif whole or s in lrs:
                out.append((s, follower_leo, hw))
            else:
                r = rep[s]
                out.append((s, r.start + len(r.log), r.hw))
        return hw, tuple(out)

    def mark(self) -> None:
        """The shell's save summed up every set as it stands now (``joined``)."""
        self.joined.clear()

    def unsteady_keys(self, sets: Mapping[Key, ReplicaSet]) -> Iterable[Key]:
        """The keys of the loaded sets that are not steady: every key while the index is
        empty, else ``active``, rebuilt with one pass when its count is off (a set loaded
        or dropped without the index being told)."""
        if not self.keys:
            return sets
        active = self.active
        # The subset tests run in C (dict views): a Python test per key was 11 ms of every
        # tick of a 100,000-partition cluster with an SPU down (6,000 sets not steady).
        if (active is None or len(active) + len(self.keys) != len(sets)
                or not active.keys() <= sets.keys()):
            if not self.keys.keys() <= sets.keys():
                for key in [k for k in self.keys if k not in sets]:
                    self._out(key)
            # The keys' filter runs in C: a Python test per set was most of a quiet round.
            active = self.active = dict.fromkeys(filterfalse(self.keys.__contains__, sets))
        return active

    def saving_under(self, condition: object) -> None:
        """A save is about to use the saved marks under ``condition``: if it is not the
        one they were set under, they no longer hold."""
        if condition != self.saved_under:
            self.fresh.update(dict.fromkeys(self.saved))
            self.saved.clear()
            self.saved_under = condition

    def unsaved_keys(self, sets: Mapping[Key, ReplicaSet]) -> Iterable[Key]:
        """The keys a save must encode: every set but the steady ones it encoded since."""
        if not self.saved:
            return sets
        return [*self.unsteady_keys(sets), *self.fresh]

    def encoded(self) -> None:
        """The save encoded every fresh steady set (their bytes once it lands)."""
        self.saved.update(self.fresh)
        self.fresh.clear()
