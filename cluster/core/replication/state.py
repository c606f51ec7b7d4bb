"""Replica and cluster state for the replication core.

Offset convention (the one the seeds use): offsets start at 0 and a replica's
LEO is the *next* offset it will write. LEO 4 means records 0..3 were written;
a replica keeps only the records from its log start on (``Replica.start``;
below it they were compacted away, see ``compaction``). HW uses the same
convention: HW 2 means offsets 0 and 1 are committed, so a COMMITTED consumer
may read offsets < HW.
With that convention "HW = min LEO over the LRS" holds literally and 001's
example (LEO 4/3/2, HW 2; follower-2 offline -> HW 3) reproduces exactly.

State objects are mutable: controllers update the state they are given in
place and return actions describing what changed. The shell owns the state
(loads it, calls a controller, persists it); the actions are what it logs,
notifies and schedules. Copy with ``serial.cluster_from_dict(cluster_to_dict())``
when an immutable snapshot is needed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Collection, Iterable

from .steady import Steady

Key = tuple[str, int]

DEFAULT_MAX_LAG = 1000
DEFAULT_MIN_LRS = 1
DEFAULT_ELECTION_TIMEOUT_MS = 3000
DEFAULT_MOVE_TIMEOUT_MS = 60_000
# The record id read at an offset below a replica's log start: its record was compacted.
COMPACTED = -1


class ReplicationError(Exception):
    """Bad input to the replication core (unknown SPU, bad replica map...)."""


class UnknownPartition(ReplicationError, KeyError):
    """No replica set for this (topic, partition)."""


class NoLeader(ReplicationError):
    """The replica set has no leader right now (Election/CandidateFound/Offline)."""


class Resolution(str, Enum):
    ONLINE = "Online"
    ELECTION = "Election"
    CANDIDATE_FOUND = "CandidateFound"
    OFFLINE = "Offline"


class Acks(IntEnum):
    """Producer acknowledgement level; ALL is -1 as in Kafka's wire protocol."""

    NONE = 0
    LEADER = 1
    ALL = -1

    @classmethod
    def parse(cls, value: Acks | int | str) -> Acks:
        if isinstance(value, str):
            text = value.strip().lower()
            if text == "all":
                return cls.ALL
            value = int(text)
        try:
            return cls(int(value))
        except ValueError:
            raise ReplicationError(f"acks must be 0, 1 or all, not {value!r}") from None


class Isolation(str, Enum):
    COMMITTED = "committed"
    UNCOMMITTED = "uncommitted"


@dataclass(slots=True, frozen=True)
class TopicConfig:
    """A topic's replication settings: replaced, never changed in place (a process shares
    the configs it loads between its units of work)."""
    name: str
    max_lag: int = DEFAULT_MAX_LAG
    min_lrs: int = DEFAULT_MIN_LRS
    lag_time_max_ms: int | None = None
    # Kafka's unclean.leader.election.enable: availability over committed records.
    unclean_leader_election: bool = False


class MovePhase(str, Enum):
    CATCHING_UP = "CatchingUp"
    STALLED = "Stalled"
    ELECTING = "Electing"
    ROLLING_BACK = "RollingBack"


@dataclass(slots=True)
class Reassignment:
    """A move of one partition's replica list in flight (see ``reassign``).

    While it runs the set's replicas are ``original`` followed by the target
    replicas it adds; nothing is removed before the move completes or rolls back.
    """

    original: list[int]
    target: list[int]
    elect_preferred: bool = False
    timeout_ms: int | None = DEFAULT_MOVE_TIMEOUT_MS
    started_ms: int | None = None
    # When a new replica's SPU was first seen offline; the timeout counts from here.
    stalled_ms: int | None = None
    rolling_back: bool = False
    reason: str = ""
    # Last phase and caught-up replicas reported, so MoveProgressed is sent on change only.
    phase: MovePhase = MovePhase.CATCHING_UP
    caught_up: list[int] = field(default_factory=list)

    @property
    def adding(self) -> list[int]:
        return [s for s in self.target if s not in self.original]

    @property
    def removing(self) -> list[int]:
        return [s for s in self.original if s not in self.target]

    @property
    def destination(self) -> list[int]:
        """The list the set ends with: the target, or the original when rolling back."""
        return self.original if self.rolling_back else self.target


@dataclass(slots=True)
class Replica:
    """One replica's local store plus the SPU's own view of its role.

    ``log`` holds the record ids at offsets ``start`` .. ``leo - 1`` only, so a
    replica costs what it retains, not every record ever written; an offset
    below ``start`` reads as ``COMPACTED``.
    """

    spu: int
    log: list[int] = field(default_factory=list)
    hw: int = 0
    # The SPU's belief, not the SC's: lets a checker count self-declared leaders.
    claims_leadership: bool = False
    seen_attempt: int = 0
    caught_up_ms: int | None = None
    start: int = 0

    @property
    def leo(self) -> int:
        return self.start + len(self.log)

    def at(self, offset: int) -> int:
        """The record id at ``offset`` (< leo); COMPACTED below the log start."""
        return COMPACTED if offset < self.start else self.log[offset - self.start]

    def last(self) -> int | None:
        """The record id at leo - 1 (None for an empty replica): a cheap divergence probe."""
        if self.log:
            return self.log[-1]
        return COMPACTED if self.start else None

    def records(self, first: int, end: int) -> list[int]:
        """Record ids at offsets [first, end), COMPACTED for those below the log start."""
        end = min(end, self.leo)
        if first >= end:
            return []
        lost = max(0, min(end, self.start) - first)
        return [COMPACTED] * lost + self.log[max(first, self.start) - self.start:end - self.start]

    def truncate(self, to: int) -> None:
        """Drop every record at offset >= ``to``."""
        if to <= self.start:
            self.start, self.log = to, []
        else:
            del self.log[to - self.start:]

    def compact_to(self, offset: int) -> None:
        """Forget the records below ``offset`` (at most the whole log); offsets stay."""
        offset = min(offset, self.leo)
        if offset > self.start:
            del self.log[:offset - self.start]
            self.start = offset

    def copy_from(self, source: Replica, end: int) -> None:
        """Append ``source``'s records from this replica's LEO up to ``end``.

        Offsets the source has compacted are compacted here too: a replica far
        behind jumps to the source's log start instead of holding placeholders.
        """
        leo = self.leo
        if leo < source.start:
            # Records below the source's start exist nowhere any more: nothing to keep below it.
            self.start, self.log = min(end, source.start), []
            leo = self.start
        if leo < end:
            self.log.extend(source.log[leo - source.start:end - source.start])


@dataclass(slots=True)
class ReplicaSet:
    topic: str
    partition: int
    replicas: list[int]
    replica: dict[int, Replica]
    leader: int | None = None
    lrs: list[int] = field(default_factory=list)
    resolution: Resolution = Resolution.ONLINE
    hw: int = 0
    epoch: int = 0
    candidate: int | None = None
    # Never reset, so a timer or response from any earlier proposal is stale.
    attempt: int = 0
    tried: list[int] = field(default_factory=list)
    # (offset, record_id) of acks=all records not yet committed, offset order.
    pending: list[tuple[int, int]] = field(default_factory=list)
    move: Reassignment | None = None
    # When the current candidate's wait-for-response timer fires (CandidateFound only):
    # a deadline kept in the state, so no lost message can strand the election.
    deadline_ms: int | None = None
    # SPU -> the leader epoch it still believes it leads: a leader the SC deposed when its
    # session expired, cut off from the SC so it never heard (see ``links``).
    deposed: dict[int, int] = field(default_factory=dict)
    # SPU -> the leader epoch it last heard: a replica that cannot hear the SC when the
    # epoch moves on (``links``) does not know the new leader and fetches from nobody.
    unaware: dict[int, int] = field(default_factory=dict)

    @property
    def key(self) -> Key:
        return (self.topic, self.partition)

    @property
    def leo(self) -> int | None:
        return None if self.leader is None else self.replica[self.leader].leo

    def followers(self) -> list[int]:
        return [s for s in self.replicas if s != self.leader]


@dataclass(slots=True)
class Cut:
    """A network cut in force (``links``): the SPUs of one side against the other end.

    ``kind`` names the other end: ``controller``, ``producers``, ``spu`` (the SPUs in
    ``peers``) or ``racks`` (``peers`` are the SPUs of every other rack, and the SC sits
    with them). ``one_way`` drops only what ``spus`` send; what they are sent arrives;
    with ``inbound`` too, the other way round: only what they are sent is dropped.
    """
    id: int
    kind: str
    spus: tuple[int, ...]
    peers: tuple[int, ...] = ()
    one_way: bool = False
    racks: tuple[str, ...] = ()
    since_ms: int = 0
    inbound: bool = False


@dataclass
class ClusterState:
    spus: dict[int, bool] = field(default_factory=dict)
    topics: dict[str, TopicConfig] = field(default_factory=dict)
    replica_sets: dict[Key, ReplicaSet] = field(default_factory=dict)
    next_record_id: int = 0
    election_timeout_ms: int = DEFAULT_ELECTION_TIMEOUT_MS
    # Directed (follower SPU, leader SPU) links; one per direction per pair.
    connections: set[tuple[int, int]] = field(default_factory=set)
    # The time of the step being applied (the shell sets it): election deadlines count from it.
    clock_ms: int = 0
    # Network cuts in force and the SPUs the SC declared offline for a session a cut
    # broke (SPU -> when): those still run, and rejoin when the cut heals (``links``).
    cuts: list[Cut] = field(default_factory=list)
    next_cut_id: int = 1
    expired: dict[int, int] = field(default_factory=dict)
    # The accounting of the latest rehearsal (``ledger``), a plain JSON-able dict.
    rehearsal: dict | None = None
    # (from, to) node pairs the cuts block, rebuilt on demand (``links.blocked_pairs``).
    _blocked: frozenset | None = field(default=None, repr=False, compare=False)
    # SPU -> keys of the sets with a replica on it, as an insertion-ordered set: an SPU's
    # found on first use (``keys_of``), then kept by the rules that add or drop replicas.
    _members: dict[int, dict[Key, None]] = field(default_factory=dict, repr=False, compare=False)
    # The sets a fetch round would leave as they are (``steady``): not stored, rebuilt.
    steady: Steady = field(default_factory=Steady, repr=False, compare=False)
    # The keys of the sets whose replicas the rules changed since this state was built (a
    # set made, a move started or ended): a save knows which stored index of the sets by
    # SPU it must build again (cluster/adapters/spu_index.py). Not stored.
    replicas_touched: set[Key] = field(default_factory=set, repr=False, compare=False)

    def is_online(self, spu: int) -> bool:
        return self.spus.get(spu, False)

    def replica_set(self, topic: str, partition: int) -> ReplicaSet:
        """The set, for a rule that may change it (it leaves the steady index)."""
        try:
            rs = self.replica_sets[(topic, partition)]
        except KeyError:
            raise UnknownPartition(f"unknown partition {topic}/{partition}") from None
        if self.steady.keys:
            self.steady.leave(rs)
        return rs

    def unsteady_sets(self) -> Collection[ReplicaSet]:
        """The sets that are not steady (``steady``), for a scan that looks for elections
        or moves to advance, which a steady set never has: without a pass over every set."""
        sets = self.replica_sets
        keys = self.steady.unsteady_keys(sets)
        return sets.values() if keys is sets else [sets[k] for k in keys]

    def sets_of(self, spu: int) -> list[ReplicaSet]:
        """Replica sets that have a replica on this SPU (index kept lazily), for a rule
        that may change them (they leave the steady index)."""
        sets = [self.replica_sets[k] for k in self.keys_of(spu)]
        if self.steady.keys:
            for rs in sets:
                self.steady.leave(rs)
        return sets

    def keys_of(self, spu: int) -> Collection[Key]:
        members = self._members.get(spu)
        if members is None:
            # One SPU's sets, found by one pass in C-level comprehension: indexing every
            # SPU's sets to find one SPU's was 70 ms of a failover at 100,000 partitions,
            # and every unit of work starts with no index.
            members = self._members[spu] = {
                key: None for key, rs in self.replica_sets.items() if spu in rs.replicas}
        return members

    def index_add(self, key: Key, spu: int) -> None:
        """The set under ``key`` has a replica on ``spu`` now (an SPU not indexed yet
        finds it when it is: its pass reads the sets' replicas)."""
        self.replicas_touched.add(key)
        members = self._members.get(spu)
        if members is not None:
            members[key] = None

    def index_remove(self, key: Key, spu: int) -> None:
        self.replicas_touched.add(key)
        members = self._members.get(spu)
        if members is not None:
            members.pop(key, None)

    def reindex(self) -> None:
        """Forget the index (sets replaced or dropped wholesale): each SPU's is found again
        on first use."""
        self._members = {}


def new_cluster(spus: Iterable[int], *, offline: Iterable[int] = (),
                election_timeout_ms: int = DEFAULT_ELECTION_TIMEOUT_MS) -> ClusterState:
    down = set(offline)
    return ClusterState(spus={s: s not in down for s in spus},
                        election_timeout_ms=election_timeout_ms)


def register_spu(state: ClusterState, spu: int, *, online: bool = True) -> None:
    if spu in state.spus:
        raise ReplicationError(f"SPU {spu} is already registered")
    state.spus[spu] = online
