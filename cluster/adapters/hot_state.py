"""Hot replication state in Redis: replica sets, SPU loops, record values, acks.

Every key carries the store's identity (``repl:{<store id>}:<name>``, the
braces a Redis Cluster hash tag), so two installations sharing a Redis
database never see, let alone delete, each other's state:
* ``meta`` and ``meta:topics``: JSON of the core's cluster meta plus the shell's topic
  table (topic and partition primary keys, producer rates) and the Redis run id
  that last checked the hot state against the store, split in two keys: the topics,
  which seldom change, apart (meta_json.py, meta_reading.py);
* ``sets:<topic>``: one hash per topic, field = partition index, value = the
  replica set's status in msgpack: a format version, then the fields. Logs are
  stored once: every replica whose log is a prefix of the leader's is stored as
  its length, and compacted offsets as a count (``core.replication.compaction``),
  the same count the core keeps as the replica's log start;
* ``recs:<topic>:<partition>``: the reference log's retained record ids, int64s
  appended as the log grows (set_codec.encode_status): a tick writes what it
  appended, and the whole run only when compaction moved its start or another
  replica's log became the reference;
* ``lock`` / ``fence``: the lease every load-modify-save holds and the counter
  its fencing tokens come from (cluster/adapters/lease.py); with shards, also
  ``lock:shard:<i>`` and ``record_ids``, the counter shard tasks take record
  ids from (cluster/adapters/shards.py). With ``HOT_STATE_REDIS_URLS`` each shard's
  sets, records, lease and generation live on its own server (hot_servers.py);
* ``<lock>:sets-gen``: the token of the last save of sets under that lease, which
  tells a process whether anyone else wrote them since (set_cache.py);
* ``killed`` (set) / ``heartbeats`` (hash): the SPU loops (stopped ones, and
  the last time each live one ran), read by the connection manager;
* ``worker``: refreshed by a running Celery worker, so commands know whether
  to wait for it or step the services themselves;
* ``values:<topic>`` (hash record id -> value, trimmed with compaction),
  ``ticket:<id>``: produce outcomes; ``store``: the store id, for people reading Redis.

Writes of replica sets, meta and values go through ``lease.fenced_write``, naming
the leases their writer holds: they land only while it still holds them.

Everything that builds many objects runs with the cyclic GC paused: decoding
10,000 replica sets otherwise spends most of its time in collections.
"""

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple, cast

from django.conf import settings

from cluster.adapters import (hot_placement, hot_servers, lease, set_cache, shards,
                              spu_index, status_rows)
from cluster.adapters.meta_json import MetaParts
from cluster.adapters.meta_reading import read_meta
from cluster.adapters.set_cache import SetCache
from cluster.adapters import redis_keys
from cluster.adapters.redis_keys import bound_to_store, client, key
from cluster.core.replication import (ClusterState, Key, ReplicaSet, Resolution,
                                      cluster_from_dict, new_cluster)
from cluster.perf import gc_paused
from cluster.adapters.set_codec import (OPTIONAL_SET_FIELDS, SET_FORMAT,  # noqa: F401
                                        LeaderLog, ReplicaStatus, Summary, checked_records,
                                        decode_fields, decode_move, decode_set, encode_move,
                                        encode_set, encode_status, records_from,
                                        start_and_apart, status_fields, summary,
                                        view_summary)
from cluster.adapters.set_loading import (adopt, cache_scope, fetch_full,  # noqa: F401
                                          fetch_some, keys_holding, sets_key,
                                          take_after_others, take_trusted)
from cluster.adapters.set_records import records_key  # noqa: F401 (re-exported)
from cluster.adapters.hot_types import (HotState, Producer, Stored,  # noqa: F401 (re-exported)
                                       TopicTable)
from cluster.adapters.hot_save import (LogEntries, save, save_meta,  # noqa: F401 (re-exported)
                                       save_sets)
from cluster.adapters.hot_records import (TICKET_TTL_S, Ticket, beat,  # noqa: F401
                                          clear_worker, forget_heartbeat, heartbeats, kill,
                                          killed, open_tickets, read_ticket, read_values,
                                          revive, ticket_key, ticket_ops,
                                          values_key, values_ops, worker_alive, write_ticket)

PREFIX = redis_keys.PREFIX  # live batching builds its own keys from it
_NAMES = {"META": "meta", "LOCK": "lock", "FENCE": "fence", "KILLED": "killed",
          "HEARTBEATS": "heartbeats", "WORKER": "worker", "STORE": "store",
          "TICKETS": "tickets"}
_RESOLUTIONS = {r.value: r for r in Resolution}


def __getattr__(name: str) -> str:
    """``hot_state.META`` and friends: the key of that name in the current store's namespace."""
    if name in _NAMES:
        return key(_NAMES[name])
    raise AttributeError(name)


@contextmanager
def locked(timeout_s: float | None = None) -> Iterator[lease.Held]:
    """Hold the store's fenced lease (waiting up to ``timeout_s``) with its namespace bound."""
    with bound_to_store(), lease.held_all(timeout_s or settings.REPLICATION_LOCK_TIMEOUT_S,
                                          [lease.CLUSTER_LOCK]) as held:
        yield held


def read_leader_log(key: Key) -> LeaderLog | None:
    """For readers: a set's leader log from its stored encoding (None if not replicated).

    A full decode spells out every compacted offset, so a read at offset
    10,000,000 would build lists of ten million ids; this reads the retained tail.
    """
    pipe = hot_servers.client_of(shards.server_of(key)).pipeline(transaction=True)
    pipe.hget(sets_key(key[0]), str(key[1]))
    pipe.get(records_key(*key))
    # Its row (status_rows.py: a shard's block, on the set's server): one more field read.
    block = str(status_rows.block_of(key[1]))
    pipe.hget(status_rows.rows_key(key[0]), block)
    data, records, row = pipe.execute()
    if data is None:
        return None
    [(_, data)] = status_rows.overlay([(key, data)], {key[0]: {block: row}})
    fields = status_fields(data)
    (_, _, _, _, leader, _, resolution, hw, _, _, _, _, _, start, tail, *_) = fields
    apart = start_and_apart(fields)[1]
    if apart is not None:  # a run that disagrees with its status is refused here too
        tail = checked_records(key[0], key[1], apart, records_from(records), tail)
    return LeaderLog(leader, _RESOLUTIONS[resolution], hw, start + len(tail), start, tail)


# ---- load and save ------------------------------------------------------------

# Given the keys of the sets a save writes, the log entries that describe the change.


class _Meta(NamedTuple):
    state: ClusterState
    topics: dict[str, TopicTable]
    producers: dict[str, Producer]
    checked: str | None  # the Redis run id under which the state was last checked
    racks: dict[str, str]
    generation: str | None  # the sets' generation under the leases held (HotState)
    generations: dict[str, str | None]  # each lease's own (HotState)
    indexed: frozenset[str]  # the leases whose shard's SPU index was exact (HotState)
    placed: bytes | None  # the placement the sets were written under (hot_placement)
    adopted: dict[str, Any]  # what the engine's controllers adopted (HotState)
    raw: dict[str, bytes]  # the meta's keys as read (HotState.meta_raw)


Both = tuple[bytes | None, bytes | None]  # the meta's two keys as read together


def _meta(scope: tuple[str, ...] = (), parts: MetaParts | None = None,
          namespace: str = "") -> _Meta:
    """The meta (its two keys, meta_reading.py: the topics' read only when ``parts``, what
    this process wrote last under ``namespace``, lacks the text the small key names) and
    the scope's sets generation."""
    names = (key("meta"), key("meta:topics"))
    # Each lease's generation, then its shard's index marker (spu_index.py) when sharded.
    marked = scope if shards.sharded() else ()
    read = ([set_cache.generation_key(k) for k in scope]
            + [spu_index.marker_key(k) for k in marked])
    if hot_servers.spread():
        (raw, placed), found = client().mget(names[0], hot_placement.placement_key()), \
            hot_servers.get_each(read)
    else:
        pipe = client().pipeline(transaction=True)
        pipe.mget(names[0], hot_placement.placement_key())
        for k in read:
            pipe.get(k)
        (raw, placed), *found = pipe.execute()
    tokens, markers = found[:len(scope)], found[len(scope):]
    indexed = spu_index.exact_marks(marked, markers, tokens)
    generation = tokens[0].decode() if tokens and tokens[0] is not None else None
    if any(token != tokens[0] for token in tokens):
        generation = None  # some lease's sets were written by another holder
    generations = {lock_key: token.decode() if token is not None else None
                   for lock_key, token in zip(scope, tokens)}
    if raw is None:
        fresh = new_cluster([], election_timeout_ms=settings.REPLICATION_ELECTION_TIMEOUT_MS)
        return _Meta(fresh, {}, {}, None, {}, generation, generations, indexed, placed, {},
                     {})
    meta, raw, topics = read_meta(cast(bytes, raw), namespace, parts,
                                  lambda: cast(Both, tuple(client().mget(*names))))
    state = cluster_from_dict({**meta.core, "topics": ()})
    state.topics = meta.configs
    as_read = {names[0]: raw}
    if topics is not None:
        as_read[names[1]] = topics
    return _Meta(state, meta.tables, meta.producers, meta.checked, meta.racks, generation,
                 generations, indexed, placed, meta.adopted, as_read)


# The topics' parse this process keeps for its readers (loads outside a unit of work: the
# pages', ``replicated_topics``): parsed once a change (meta_json.MetaParts.keep_parse).
_READERS = MetaParts()


def replicated_topics() -> set[str]:
    """The replicated topics' names (the topics' text parsed once a change: ``_READERS``)."""
    return set(_meta(parts=_READERS, namespace=redis_keys.store_namespace()).topics)


def redis_run_id() -> str:
    """Changes whenever the Redis server restarts (its state came back from disk, or not);
    spread, whenever any of the hot state's servers does."""
    if hot_servers.spread():
        return f"{hot_servers.run_ids()}|{settings.REPLICATION_SHARDS}"
    return str(client().info("server")["run_id"])


def restarted_servers(before: str | None, after: str) -> frozenset[int] | None:
    """The hot-state servers whose run differs between two ``redis_run_id``s (one server's
    id, or spread ``id0|id1|…|shards``); None when the two cannot be compared: a fresh meta
    (``before`` None), or another placement (the sets move first)."""
    if before is None:
        return None
    was, now = before.split("|"), after.split("|")
    if len(was) != len(now):
        return None
    if len(was) > 1:  # spread: the servers' ids, then the shard count
        if was[-1] != now[-1]:
            return None
        was, now = was[:-1], now[:-1]
    return frozenset(i for i, (a, b) in enumerate(zip(was, now)) if a != b)


def load(keys: Iterable[Key] | None = None, *, committed: SetCache | None = None,
         held: lease.Held = lease.Held()) -> HotState:
    """The whole state (``keys`` None) or only the named replica sets.

    ``committed``: a unit of work's load, which may take the sets this process committed
    last from this cache instead of decoding them (cluster/adapters/set_cache.py), kept
    by the leases it ``held``."""
    return _load(lambda _: keys, committed=committed, complete=keys is None, held=held)


def _load(keys_of: Callable[[dict[str, TopicTable]], Iterable[Key] | None], *,
          committed: SetCache | None, complete: bool, held: lease.Held) -> HotState:
    """The meta, then the sets ``keys_of`` names from its topic table (None: all of them),
    from the set cache when it can be trusted (set_loading), else read from Redis."""
    with bound_to_store() as namespace:
        scope = held.names if committed is not None else ()
        parts = committed.meta if committed is not None else _READERS
        (state, topics, producers, checked, racks, generation, generations, indexed, placed,
         adopted, raw) = _meta(scope, parts, namespace)
        keys = keys_of(topics)
        if keys is None or keys:  # a load of no set (the quiet tick's) reads no server's
            every = {key(name) for name in shards.every_lock()}
            if hot_placement.check(placed, topics, whole=every <= set(held.names)) is not None:
                # Sets moved between servers, with no generation: no index marker read
                # there can be trusted (spu_index.py) ...
                indexed = frozenset()
                if committed is not None:
                    # ... and the rows were folded into the fields: no image's anchors hold.
                    committed.clear()
        hot = HotState(state, topics, full=keys is None, producers=producers,
                       checked=checked, racks=racks,
                       adopted=adopted, scope=scope, generation=generation,
                       generations=generations, indexed=indexed, complete=complete,
                       meta_parts=committed.meta if committed is not None else None,
                       namespace=namespace, meta_raw=raw)
        if committed is not None:
            hot.own = take_trusted(hot, keys, committed)
            if hot.own or take_after_others(hot, committed, keys):
                return hot
        # Every set the leases guard read: what the cache keeps after this unit is exact.
        hot.exact = complete
        fetched = (fetch_full(topics, hot.rowed) if keys is None
                   else fetch_some(keys, topics, hot.rowed))
        adopt(hot, fetched, committed)
    return hot


def keep_committed(hot: HotState, cache: SetCache) -> None:
    """After a unit of work committed and projected: its sets may be taken by the next."""
    with gc_paused(freeze=True):  # the scope names the load's namespace: no binding needed
        cache.keep(cache_scope(hot), hot)


def load_selected(pick: Callable[[dict[str, TopicTable]], Iterable[Key]], *,
                  committed: SetCache | None = None, complete: bool = False,
                  held: lease.Held = lease.Held()) -> HotState:
    """The meta and the replica sets ``pick`` names from the topic table: a shard's part,
    read with one fetch of the meta. ``complete``: ``pick`` names every set the leases
    ``held`` guard (whole shards)."""
    return _load(lambda topics: list(pick(topics)), committed=committed, complete=complete,
                 held=held)


def restore_at(rs: ReplicaSet, hw: int) -> int:
    """Bring a set whose hot state is missing or older than the store up to the store's HW.

    The records themselves are gone: every replica gets a compacted log of ``hw``
    offsets, so offsets, HW and LEO go on from the store's figures instead of 0.
    Returns how many committed records the hot state had lost.
    """
    missing = hw - rs.hw
    for replica in rs.replica.values():
        replica.start, replica.log, replica.hw = hw, [], hw
    rs.hw, rs.pending = hw, []
    return missing


def highest_value_id(topics: Iterable[str]) -> int:
    """The largest record id holding a value (-1 if none): record ids must stay above it."""
    pipe = client().pipeline(transaction=False)
    for name in topics:
        pipe.hkeys(values_key(name))
    return max((int(i) for found in pipe.execute() for i in found), default=-1)


