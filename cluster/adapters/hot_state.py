"""Hot replication state in Redis: replica sets, SPU loops, record values, acks.

Every key carries the store's identity (``repl:{<store id>}:<name>``, the
braces a Redis Cluster hash tag), so two installations sharing a Redis
database never see, let alone delete, each other's state:
* ``meta``: JSON of the core's cluster meta plus the shell's topic table
  (topic and partition primary keys, producer rates) and the Redis run id
  that last checked the hot state against the store;
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

Writes of replica sets, meta and values go through ``lease.fenced_write``:
they land only while the writer still holds the lease.

Everything that builds many objects runs with the cyclic GC paused: decoding
10,000 replica sets otherwise spends most of its time in collections.
"""

import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from django.conf import settings

from cluster.adapters import (hot_placement, hot_servers, lease, metadata_log, save_pieces,
                              set_cache, shards)
from cluster.adapters.set_cache import SetCache
from cluster.adapters.lease import WriteOp
from cluster.adapters.meta_json import meta_json
from cluster.adapters import redis_keys
from cluster.adapters.redis_keys import bound_to_store, client, key
from cluster.core.replication import (ClusterState, Key, Replica, ReplicaSet, Resolution,
                                      cluster_from_dict, new_cluster)
from cluster.core.replication.compaction import compact, reference_replica
from cluster.perf import gc_paused
from cluster.adapters.set_codec import (OPTIONAL_SET_FIELDS, SET_FORMAT,  # noqa: F401
                                        LeaderLog, ReplicaStatus, Summary, checked_records,
                                        decode_fields, decode_move, decode_set, encode_move,
                                        encode_set, encode_status, records_from,
                                        start_and_apart, status_fields, summary)
from cluster.adapters import set_records
from cluster.adapters.set_loading import (adopt, cache_scope, fetch_full, fetch_some,
                                          sets_key, take_trusted)
from cluster.adapters.set_records import records_key  # noqa: F401 (re-exported)
from cluster.adapters.hot_types import HotState, Stored, TopicTable  # noqa: F401 (re-exported)
from cluster.adapters.hot_records import (TICKET_TTL_S, Ticket, beat,  # noqa: F401
                                          clear_worker, forget_heartbeat, heartbeats, kill,
                                          killed, open_tickets, read_ticket, read_values,
                                          revive, store_values, ticket_key, ticket_ops,
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
def locked(timeout_s: float | None = None) -> Iterator[lease.Lease]:
    """Hold the store's fenced lease (waiting up to ``timeout_s``) with its namespace bound."""
    with bound_to_store(), lease.held(timeout_s or settings.REPLICATION_LOCK_TIMEOUT_S) as held:
        yield held


def read_leader_log(key: Key) -> LeaderLog | None:
    """For readers: a set's leader log from its stored encoding (None if not replicated).

    A full decode spells out every compacted offset, so a read at offset
    10,000,000 would build lists of ten million ids; this reads the retained tail.
    """
    pipe = hot_servers.client_of(shards.server_of(key)).pipeline(transaction=True)
    pipe.hget(sets_key(key[0]), str(key[1]))
    pipe.get(records_key(*key))
    data, records = pipe.execute()
    if data is None:
        return None
    fields = status_fields(data)
    (_, _, _, _, leader, _, resolution, hw, _, _, _, _, _, start, tail, *_) = fields
    apart = start_and_apart(fields)[1]
    if apart is not None:  # a run that disagrees with its status is refused here too
        tail = checked_records(key[0], key[1], apart, records_from(records))
    return LeaderLog(leader, _RESOLUTIONS[resolution], hw, start + len(tail), start, tail)


# ---- load and save ------------------------------------------------------------

# Given the keys of the sets a save writes, the log entries that describe the change.
LogEntries = Callable[[list[Key]], list[dict[str, Any]]]


class _Meta(NamedTuple):
    state: ClusterState
    topics: dict[str, TopicTable]
    checked: str | None  # the Redis run id under which the state was last checked
    racks: dict[str, str]
    generation: str | None  # the sets' generation under the leases held (HotState)
    placed: bytes | None  # the placement the sets were written under (hot_placement)


def _meta(scope: tuple[str, ...] = ()) -> _Meta:
    if hot_servers.spread():
        (raw, placed), tokens = client().mget(key("meta"), hot_placement.placement_key()), \
            hot_servers.get_each([set_cache.generation_key(k) for k in scope])
    else:
        pipe = client().pipeline(transaction=True)
        pipe.mget(key("meta"), hot_placement.placement_key())
        for lock_key in scope:
            pipe.get(set_cache.generation_key(lock_key))
        (raw, placed), *tokens = pipe.execute()
    generation = tokens[0].decode() if tokens and tokens[0] is not None else None
    if any(token != tokens[0] for token in tokens):
        generation = None  # some lease's sets were written by another holder
    if raw is None:
        fresh = new_cluster([], election_timeout_ms=settings.REPLICATION_ELECTION_TIMEOUT_MS)
        return _Meta(fresh, {}, None, {}, generation, placed)
    meta = json.loads(raw)
    return _Meta(cluster_from_dict(meta["core"]), meta["topics"], meta.get("checked"),
                 meta.get("racks", {}), generation, placed)


def replicated_topics() -> set[str]:
    raw = client().get(key("meta"))
    return set(json.loads(raw)["topics"]) if raw is not None else set()


def redis_run_id() -> str:
    """Changes whenever the Redis server restarts (its state came back from disk, or not);
    spread, whenever any of the hot state's servers does."""
    if hot_servers.spread():
        return f"{hot_servers.run_ids()}|{settings.REPLICATION_SHARDS}"
    return str(client().info("server")["run_id"])


def load(keys: Iterable[Key] | None = None, *, committed: SetCache | None = None
         ) -> HotState:
    """The whole state (``keys`` None) or only the named replica sets.

    ``committed``: a unit of work's load, which may take the sets this process committed
    last from this cache instead of decoding them (cluster/adapters/set_cache.py)."""
    return _load(lambda _: keys, committed=committed, complete=keys is None)


def _load(keys_of: Callable[[dict[str, TopicTable]], Iterable[Key] | None], *,
          committed: SetCache | None, complete: bool) -> HotState:
    """The meta, then the sets ``keys_of`` names from its topic table (None: all of them),
    from the set cache when it can be trusted (set_loading), else read from Redis."""
    with bound_to_store():
        scope = lease.held_names() if committed is not None else ()
        state, topics, checked, racks, generation, placed = _meta(scope)
        keys = keys_of(topics)
        if keys is None or keys:  # a load of no set (the quiet tick's) reads no server's
            every = {key(name) for name in shards.every_lock()}
            hot_placement.check(placed, topics, whole=every <= set(lease.held_names()))
        hot = HotState(state, topics, full=keys is None, checked=checked, racks=racks,
                       scope=scope, generation=generation, complete=complete)
        if committed is not None and take_trusted(hot, keys, committed):
            return hot
        # Every set the leases guard read: what the cache keeps after this unit is exact.
        hot.exact = complete
        fetched = fetch_full(topics) if keys is None else fetch_some(keys, topics)
        adopt(hot, fetched, committed)
    return hot


def keep_committed(hot: HotState, cache: SetCache) -> None:
    """After a unit of work committed and projected: its sets may be taken by the next."""
    with bound_to_store(), gc_paused(freeze=True):
        cache.keep(cache_scope(hot), hot)


class _Encoded(NamedTuple):
    changed: dict[str, dict[str, bytes]]  # the statuses that changed, by topic and partition
    keys: list[Key]                       # their keys, in that order
    released: dict[Key, list[int]]        # record ids compaction released, by set


def _compact_and_encode(hot: HotState, retain: int | None, records: set_records.Writes,
                        sets: dict[Key, ReplicaSet] | None = None) -> _Encoded:
    """Compact every loaded set (or those of ``sets``) and encode each status; return what
    changed (``_Encoded``), and add to ``records`` the writes of the changed sets' records.

    A steady set this save's predecessor already encoded (core.replication.steady: no rule
    touched it since, and its compaction is where that save left it) is passed over: its
    bytes are the stored ones. At 100,000 partitions with a thousand busy, encoding every
    set only to find it unchanged was a third of the tick. One server's part of a spread
    save (``sets``) is encoded whole: the index is not split by server."""
    retain = settings.REPLICATION_LOG_RETENTION if retain is None else retain
    out = _Encoded({}, [], {})
    changed, keys = out.changed, out.keys
    raw, stored, after = hot.raw, hot.stored, hot.after
    topic, fields = None, {}
    items: Iterable[tuple[Key, ReplicaSet]]
    if sets is None:
        steady, loaded = hot.state.steady, hot.state.replica_sets
        steady.saving_under(retain)
        unsaved = steady.unsaved_keys(loaded)
        items = loaded.items() if unsaved is loaded else [(k, loaded[k]) for k in unsaved]
        steady.encoded()  # the fresh steady sets are in ``items``: their bytes once it lands
    else:
        items = sets.items()
    with gc_paused():
        for set_key, rs in items:
            # Compaction moves every replica's start, never which one is the reference.
            ref = reference_replica(rs)
            gone = _compact(rs, ref, retain)
            if gone:
                out.released[set_key] = gone
            data, summed = encode_status(rs, ref)
            if raw.get(set_key) != data:
                if set_key[0] != topic:  # sets come topic by topic
                    topic = set_key[0]
                    fields = changed.get(topic) or changed.setdefault(topic, {})
                fields[str(set_key[1])] = data
                keys.append(set_key)
                raw[set_key] = data
                stored[set_key] = records.follow(set_key, stored.get(set_key), ref)
                # Summed up with its encoding: a pass of its own over 10,000 sets later
                # cost three times as much, in cache misses.
                after[set_key] = summed
    return out


def _meta_op(hot: HotState) -> WriteOp:
    text = meta_json(redis_keys.store_namespace(), hot.state, hot.topics, hot.checked,
                     hot.racks)
    return WriteOp("set", key("meta"), text)


def save(hot: HotState, *, retain: int | None = None, log: LogEntries | None = None
         ) -> list[Key]:
    """Write the replica sets whose encoding changed, the meta, and drop the values
    compaction released, fenced, with the log entries ``log`` gives for the changed sets
    (one transaction, or bounded pieces for a large save: save_pieces; spread over several
    servers, one transaction per server: _save_spread); return the keys of the changed sets."""
    if hot_servers.spread():
        return _save_spread(hot, retain, log, whole=True)
    records = set_records.Writes()
    for name in hot.dropped:  # read before the write; the lease is held
        for p in client().hkeys(sets_key(name)):
            records.delete((name, int(p)))
    encoded = _compact_and_encode(hot, retain, records)
    head = [WriteOp("del", k) for name in hot.dropped for k in (sets_key(name), values_key(name))]
    _write_sets(hot, encoded, records, log, head=head, meta=_meta_op(hot),
                kept=lambda name: name in hot.topics)
    return encoded.keys


def _write_sets(hot: HotState, encoded: _Encoded, records: set_records.Writes,
                log: LogEntries | None, *, head: list[WriteOp], meta: WriteOp | None,
                kept: Callable[[str], bool]) -> None:
    """The save's fenced write on one server: one transaction, or pieces (save_pieces) when
    it is large, plain (no topic added or dropped, no entry but the step's) and its entries
    allow."""
    noted = bool(hot.log)
    entries = log(encoded.keys) if log else []
    hold = None if noted or hot.added or hot.dropped else save_pieces.held_sets(entries,
                                                                                 hot.moved)
    parts = save_pieces.groups(encoded.keys, hold) if hold is not None else [encoded.keys]
    generated: Ops = {}
    token = _generation_ops(generated)
    generations = generated.get(hot_servers.HOME, [])
    tail = [meta] if meta is not None else []
    if len(parts) == 1:
        ops = head + [WriteOp("hset", sets_key(name), fields)
                      for name, fields in encoded.changed.items()]
        ops += _present(records.op())
        gone: dict[str, list[int]] = {}
        for (name, _), ids in encoded.released.items():
            gone.setdefault(name, []).extend(ids)
        ops += [WriteOp("hdel", values_key(name), ids) for name, ids in gone.items()
                if kept(name)]
        _write_with_log(hot, {hot_servers.HOME: ops + tail + generations}, entries)
    else:
        # The first piece stores the staged values and keeps record ids unique (save_pieces).
        floor = [shards.record_ids_floor_op(hot.state.next_record_id)] if meta else []
        pieces = [save_pieces.set_ops(group, encoded.changed, records, encoded.released,
                                      sets_key, values_key, kept) for group in parts]
        pieces[0] = hot.staged + floor + pieces[0]
        hot.staged = []
        for piece in pieces[:-1]:
            lease.fenced_write(piece + generations)
        _write_with_log(hot, {hot_servers.HOME: pieces[-1] + tail + generations}, entries)
    hot.generation = token


Ops = dict[int, list[WriteOp]]  # each server's part of a commit (hot_servers.py)


def _save_spread(hot: HotState, retain: int | None, log: LogEntries | None, *,
                 whole: bool) -> list[Key]:
    """``save`` (``whole``: with the meta and the dropped topics) or ``save_sets`` over
    several servers: each server's part in one transaction (``_write_with_log``)."""
    ops, keys, released = _sets_ops(hot, retain, hot.dropped if whole else ())
    home = ops.setdefault(hot_servers.HOME, [])
    if whole:
        home += [WriteOp("del", values_key(name)) for name in hot.dropped]
    home += [WriteOp("hdel", values_key(name), ids) for name, ids in released.items()
             if not whole or name in hot.topics]
    if whole:
        home.append(_meta_op(hot))
    token = _generation_ops(ops)
    _write_with_log(hot, ops, log(keys) if log else [])
    hot.generation = token
    return keys


def _sets_ops(hot: HotState, retain: int | None, dropped: Iterable[str] = ()
              ) -> tuple[Ops, list[Key], dict[str, list[int]]]:
    """Each server's writes of the changed sets and their records (one server: all on the
    first), the changed sets' keys, and the record ids compaction released by topic."""
    if hot_servers.spread():
        groups: dict[int, dict[Key, ReplicaSet] | None] = {s: {} for s in hot_servers.servers()}
        for set_key, rs in hot.state.replica_sets.items():
            groups[shards.server_of(set_key)][set_key] = rs  # type: ignore[index]
    else:
        groups = {hot_servers.HOME: None}
    ops: Ops = {}
    keys: list[Key] = []
    released: dict[str, list[int]] = {}
    for server, sets in groups.items():
        records = set_records.Writes()
        for name in dropped:  # read before the write; the lease is held
            for p in hot_servers.client_of(server).hkeys(sets_key(name)):
                records.delete((name, int(p)))
        changed, changed_keys, gone = _compact_and_encode(hot, retain, records, sets)
        part = ops.setdefault(server, [WriteOp("del", sets_key(name)) for name in dropped])
        part += [WriteOp("hset", sets_key(name), fields) for name, fields in changed.items()]
        part += _present(records.op())
        keys += changed_keys
        for (name, _), ids in gone.items():
            released.setdefault(name, []).extend(ids)
    return ops, keys, released


def _present(op: WriteOp | None) -> list[WriteOp]:
    return [op] if op is not None else []


def _write_with_log(hot: HotState, ops: Ops, entries: list[dict[str, Any]]) -> None:
    """One fenced transaction: the state's and the unit's staged writes, and their entries.

    Spread over several servers, one per server: each other server's part first, checked
    against the leases that live there (a shard unit's sets are its commit), then the first
    server's (meta, values, tickets, log) checked against the rest, so the log never names
    a change a refused part lacks. A crash between them loses that unit's log entries and
    values (docs/durability.md)."""
    hot.log = hot.log + entries
    append = metadata_log.append_op(hot.log)
    staged, hot.staged = hot.staged, []  # taken once, whether the commit lands or not
    home = ops.pop(hot_servers.HOME, [])
    for server in sorted(ops):
        lease.fenced_write(ops[server], server=server)
    # Staged first: the save's compaction may release values the same unit stored.
    replies = lease.fenced_write(staged + home + ([append] if append else []))
    # The append is the last command: its reply is the offset of the unit's first entry.
    hot.first_offset = int(replies[-1]) if append else None


def _generation_ops(ops: Ops) -> str:
    """A fresh sets generation for every lease held (set_cache.generation_key), added to
    ``ops`` on the lease's server: every save of sets writes one, so a process whose last
    save's token is still there knows nobody wrote a set under that lease since. A holder
    of the whole state's lease may write any set: every shard's generation moves too,
    whichever shard leases it holds."""
    token = uuid.uuid4().hex
    held = lease.held_names()
    if key(lease.CLUSTER_LOCK) in held:
        held = tuple(dict.fromkeys([*held, *(key(name) for name in shards.every_lock())]))
    for k in held:
        ops.setdefault(hot_servers.server_of_lock(k), []).append(
            WriteOp("set", set_cache.generation_key(k), token))
    return token


def load_selected(pick: Callable[[dict[str, TopicTable]], Iterable[Key]], *,
                  committed: SetCache | None = None, complete: bool = False) -> HotState:
    """The meta and the replica sets ``pick`` names from the topic table: a shard's part,
    read with one fetch of the meta. ``complete``: ``pick`` names every set the leases
    held guard (whole shards)."""
    return _load(lambda topics: list(pick(topics)), committed=committed, complete=complete)


def save_sets(hot: HotState, *, retain: int | None = None, log: LogEntries | None = None
              ) -> list[Key]:
    """``save`` for a holder of some shards' leases: the replica sets whose encoding changed
    and the values compaction released, never the meta (the coordinator owns it)."""
    if hot_servers.spread():
        return _save_spread(hot, retain, log, whole=False)
    records = set_records.Writes()
    encoded = _compact_and_encode(hot, retain, records)
    _write_sets(hot, encoded, records, log, head=[], meta=None, kept=lambda _: True)
    return encoded.keys


def save_meta(hot: HotState, *, log: LogEntries | None = None) -> list[Key]:
    """Only the meta (SPUs, topic settings, the producers' table): the coordinator's quiet
    tick, which loaded no replica set."""
    _write_with_log(hot, {hot_servers.HOME: [_meta_op(hot)]}, log([]) if log else [])
    return []


def _compact(rs: ReplicaSet, ref: Replica, retain: int) -> list[int]:
    """Compact like the core (``ref``: the set's reference replica); return the record
    ids it released (their values go too)."""
    # Chunks of a tenth of the retention: each pass rewrites the compacted prefix.
    step = max(1, retain // 10)
    # The core's own condition, checked here to copy the released ids before they vanish.
    if rs.hw - retain - ref.start < step:
        return []
    released = ref.log[:rs.hw - retain - ref.start]
    compact(rs, retain, step=step)
    return released


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


