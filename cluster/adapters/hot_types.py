"""The data the hot-state adapters share: a loaded state (``HotState``), the shell's
topic row, what a set's records key holds (``Stored``) and what this process knew of a
set (``Known``).

Their own module, importing none of hot_state, set_cache, set_loading and set_records,
so those import it and each other one way only (issue 32: no import circle). hot_state
re-exports ``HotState`` and ``TopicTable`` for the engine, services and projections.
"""
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from operator import methodcaller
from typing import Any, NamedTuple, TypedDict

from cluster.adapters import unloaded
from cluster.adapters.lease import WriteOp
from cluster.adapters.meta_json import MetaParts
from cluster.adapters.set_codec import Summary
from cluster.core.replication import ClusterState, Key

# What a set's records key holds: (log start, count, last id), as last written or read.
Stored = tuple[int, int, int | None]


class Known(NamedTuple):
    """The records this process last committed of a set another process has written
    since: the run as it stood then, from its log start."""
    start: int
    records: list[int]


class TopicTable(TypedDict, total=False):
    """The shell's row for a replicated topic, kept in the meta's topics key beside the
    core's config (meta_json.py): changed only when the topic is added or set."""
    pk: int                # Topic primary key: a topic re-created under the same name differs
    partitions: list[int]  # Partition primary keys by index
    rate: float            # simulated producer, records per second


_PARTITIONS_OF = methodcaller("get", "partitions", ())


def partition_count(topics: Mapping[str, TopicTable]) -> int:
    """How many partitions the topic tables hold in all, counted in C: a Python expression
    a topic cost an idle tick at 10,000 topics 6 ms, twice (the save's retention and the
    set cache's check)."""
    return sum(map(len, map(_PARTITIONS_OF, topics.values())))


class Producer(TypedDict, total=False):
    """A topic's simulated producer's accounting (``HotState.producers``), in the meta's
    small key: it moves at every run, so it stays out of the topic's table."""
    last_ms: int | None    # when the simulated producer last ran
    carry: float           # the fraction of a record it still owes
    next: int              # the partition its round robin continues with


@dataclass
class HotState:
    """A loaded (part of the) replication state and what the store already mirrors."""
    state: ClusterState
    topics: dict[str, TopicTable]
    # Each set's status as stored, or (a steady set saved in its block's row as its
    # figures) those figures, steady_codec.Figures.
    raw: dict[Key, Any] = field(default_factory=dict)
    before: dict[Key, Summary] = field(default_factory=dict)
    full: bool = True
    # Each producing topic's accounting (services/simulated_producers.py).
    producers: dict[str, Producer] = field(default_factory=dict)
    dropped: set[str] = field(default_factory=set)
    added: set[str] = field(default_factory=set)
    checked: str | None = None
    # Each SPU's rack as the log last recorded it ({"spu id": rack}): the topology sync notes
    # a change, so history draws SPUs in the racks they had then (issue 21).
    racks: dict[str, str] = field(default_factory=dict)
    # What the engine's controllers adopted (engine/controllers.py), saved in the meta with
    # the fenced write (a refused save adopts nothing): ``offset``, the last operator intent
    # folded in; ``compared``, the tick time of the last full comparison with the rows;
    # ``checked``, the Redis run it was made under. Empty in a fresh meta: the first tick
    # compares every row.
    adopted: dict[str, Any] = field(default_factory=dict)
    # Metadata-log entries this unit of work appends with its save (the projections read
    # them back from the log, in offset order, with everyone else's).
    log: list[dict[str, Any]] = field(default_factory=list)
    # The summaries of the sets the save wrote (the unit of work fills it), but those it
    # wrote as their figures (``figured``, in order: summaries.Saved makes theirs when read).
    after: dict[Key, Summary] = field(default_factory=dict)
    figured: list[Key] = field(default_factory=list)
    # Of those, the ones whose logged status moved or that are new (engine/entries.py),
    # and the ones whose summary differs from ``before`` at all (offsets too).
    moved: list[Key] = field(default_factory=list)
    differs: list[Key] = field(default_factory=list)
    # What each loaded set's records key holds, so a save appends only the new ids.
    stored: dict[Key, Stored] = field(default_factory=dict)
    # The sets whose status a row may hold (status_rows.py), each with its entries' head
    # (its partition and the anchor of the bytes its own field holds): their rows are
    # rewritten with them.
    rowed: dict[Key, bytes] = field(default_factory=dict)
    # The lock keys of the leases the load was made under (none for a reader), and the
    # sets' generation they guard (set_cache.generation_key: None unless every one holds
    # the same token); once the save landed, the token it wrote.
    scope: tuple[str, ...] = ()
    generation: str | None = None
    # Each of those leases' own generation as the load read it (a holder of every lease,
    # sharded, notes for each shard the sets it wrote there since: hot_save._noted).
    generations: dict[str, str | None] = field(default_factory=dict)
    # Those leases whose shard's index of its sets by SPU was exact at the load
    # (spu_index.py): a save carries it to its own token, or writes it again.
    indexed: frozenset[str] = frozenset()
    # The load read every set its leases guard: the whole store, or whole shards.
    complete: bool = False
    # Every set this process's set cache holds under the scope equals the store's, as of
    # ``generation``: all were read (a complete load), or taken from an exact image.
    exact: bool = False
    # The load took this process's own image (set_loading.take_trusted): no other holder
    # wrote a set under the scope since this process's last save.
    own: bool = False
    # Writes that land in this unit's fenced commit only (a produce's values and ticket).
    staged: list[WriteOp] = field(default_factory=list)
    # What runs once this unit's fenced commit landed, in order (a tick step's database
    # writes): a refused commit drops them with the rest of the step.
    later: list[Callable[[], None]] = field(default_factory=list)
    # Once the commit landed: the log offset of ``log``'s first entry (None: it logged none).
    first_offset: int | None = None
    # The meta's JSON parts the engine kept from its last saves (a unit of work's load
    # hands the set cache's, meta_json.py); None: the save encodes every part.
    meta_parts: MetaParts | None = None
    # The store's namespace the load was made in (redis_keys.py), resolved once by the load:
    # what comes after the unit (its set cache's scope) names it rather than resolving it
    # again outside the binding. Empty: a state built by hand (tests), resolved when needed.
    namespace: str = ""
    # The meta's bytes as the load read them, by key (``meta``, ``meta:topics``), under the
    # leases it holds: a save writes neither key whose text is the same (hot_save.py).
    meta_raw: dict[str, bytes] = field(default_factory=dict)

    def stage(self, ops: Iterable[WriteOp]) -> None:
        self.staged.extend(ops)

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once this unit's fenced save has landed, never before."""
        self.later.append(callback)

    def partition_pk(self, key: Key) -> int | None:
        table = self.topics.get(key[0])
        pks = table["partitions"] if table else []
        return pks[key[1]] if key[1] < len(pks) else None

    def holds(self, key: Key) -> bool:
        """Whether the topic table names the partition (its set exists, loaded or not)."""
        table = self.topics.get(key[0])
        return table is not None and 0 <= key[1] < len(table["partitions"])

    def reads(self, keys: Iterable[Key]) -> None:
        """A step names the sets it is about to read: a unit that did not load one of them
        stops here (``unloaded.NeedsSets`` with all of them) rather than at the first read,
        so it runs again with every one loaded (the coordinator's step unit)."""
        unloaded.require(self.state.replica_sets, keys)
