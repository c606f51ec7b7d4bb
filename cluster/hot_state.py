"""Hot replication state in Redis: replica sets, SPU loops, record values, acks.

Layout (all keys under ``repl:``):
* ``meta``: JSON of the core's cluster meta plus the shell's topic table
  (topic and partition primary keys, producer rates);
* ``sets:<topic>``: one hash per topic, field = partition index, value = the
  replica set in msgpack. Logs are stored once: every replica whose log is a
  prefix of the leader's is stored as its length, and compacted offsets as a
  count (``core.replication.compaction``);
* ``lock``: the redis-py Lock every load-modify-save holds;
* ``killed`` (set) / ``heartbeats`` (hash): the SPU loops (stopped ones, and
  the last time each live one ran), read by the connection manager;
* ``worker``: refreshed by a running Celery worker, so commands know whether
  to wait for it or step the services themselves;
* ``values:<topic>`` (hash record id -> value), ``ticket:<id>``: produce outcomes.

Everything that builds many objects runs with the cyclic GC paused: decoding
10,000 replica sets otherwise spends most of its time in collections.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import msgpack
import redis

from webapp.perf import gc_paused
from django.conf import settings

from cluster.core.replication import (ClusterState, Key, Replica, ReplicaSet, Resolution,
                                      cluster_from_dict, cluster_meta_to_dict, new_cluster)
from cluster.core.replication.compaction import COMPACTED, compact, log_start, reference_log

PREFIX = "repl:"
META = PREFIX + "meta"
LOCK = PREFIX + "lock"
KILLED = PREFIX + "killed"
HEARTBEATS = PREFIX + "heartbeats"
WORKER = PREFIX + "worker"
STORE = PREFIX + "store"
TICKETS = PREFIX + "tickets"
_RESOLUTIONS = {r.value: r for r in Resolution}
_clients: dict[str, redis.Redis] = {}

# (leader, lrs, resolution, hw, leo, ((spu, leo, hw), ...)): what the store mirrors.
Summary = tuple[Any, ...]


def client() -> redis.Redis:
    url = settings.REDIS_URL
    if url not in _clients:
        _clients[url] = redis.Redis.from_url(url)
    return _clients[url]


def sets_key(topic: str) -> str:
    return f"{PREFIX}sets:{topic}"


def values_key(topic: str) -> str:
    return f"{PREFIX}values:{topic}"


def claim_for_store(store_id: str) -> bool:
    """Drop hot state that belongs to another store (e.g. a database made anew).

    Topic names and row ids repeat across databases, so without this a fresh
    database would inherit leaders and logs of an old one. True if it reset.
    """
    r = client()
    if r.get(STORE) == store_id.encode():
        return False
    keys = list(r.scan_iter(match=PREFIX + "*", count=1000))
    keys = [k for k in keys if k != LOCK.encode()]
    if keys:
        r.delete(*keys)
    r.set(STORE, store_id)
    return True


@contextmanager
def locked(timeout_s: float | None = None) -> Iterator[None]:
    """Hold the hot-state lock; it expires by itself if its holder dies."""
    lock = client().lock(LOCK, timeout=settings.REPLICATION_LOCK_TIMEOUT_S,
                         blocking_timeout=timeout_s or settings.REPLICATION_LOCK_TIMEOUT_S)
    if not lock.acquire():
        raise TimeoutError("the replication state is locked by another task")
    try:
        yield
    finally:
        try:
            lock.release()
        except redis.exceptions.LockError:
            pass  # it expired: a later holder's save already won


# ---- encoding ---------------------------------------------------------------

def _log_out(log: list[int], ref: list[int]) -> Any:
    n = len(log)
    if n <= len(ref) and (n == 0 or log[n - 1] == ref[n - 1]) and log == ref[:n]:
        return n
    start = log_start(log)
    return [start, log[start:]]


def _log_in(enc: Any, ref: list[int]) -> list[int]:
    if isinstance(enc, int):
        return ref[:enc]
    start, tail = enc
    return [COMPACTED] * start + tail if start else tail


def encode_set(rs: ReplicaSet) -> bytes:
    ref = reference_log(rs)
    start = log_start(ref)
    leo = len(ref)
    # A caught-up follower's clock is reset at every fetch: storing it would make
    # every set "changed" at every tick. Lag time then counts from the first
    # step that sees it behind (at most one tick later than the core would).
    replicas = [(_log_out(r.log, ref), r.hw, r.claims_leadership, r.seen_attempt,
                 r.caught_up_ms if len(r.log) < leo else None)
                for r in (rs.replica[s] for s in rs.replicas)]
    return msgpack.packb((rs.topic, rs.partition, rs.replicas, rs.leader, rs.lrs,
                          rs.resolution.value, rs.hw, rs.epoch, rs.candidate, rs.attempt,
                          rs.tried, rs.pending, start, ref[start:], replicas))


def decode_set(data: bytes) -> ReplicaSet:
    (topic, partition, replicas, leader, lrs, resolution, hw, epoch, candidate, attempt,
     tried, pending, start, tail, states) = msgpack.unpackb(data)
    ref = [COMPACTED] * start + tail if start else tail
    replica = {s: Replica(s, _log_in(log, ref), rhw, claims, seen, caught)
               for s, (log, rhw, claims, seen, caught) in zip(replicas, states)}
    return ReplicaSet(topic, partition, replicas, replica, leader, lrs,
                      _RESOLUTIONS[resolution], hw, epoch, candidate, attempt, tried,
                      [(o, i) for o, i in pending])


def summary(rs: ReplicaSet) -> Summary:
    """Runs twice per set and step: kept to plain tuples and no properties."""
    rep = rs.replica
    leader = rs.leader
    return (leader, tuple(rs.lrs), rs.resolution, rs.hw,
            None if leader is None else len(rep[leader].log),
            tuple([(s, len(rep[s].log), rep[s].hw) for s in rs.replicas]))


# ---- load and save ------------------------------------------------------------

@dataclass
class HotState:
    """A loaded (part of the) replication state and what the store already mirrors."""
    state: ClusterState
    topics: dict[str, dict[str, Any]]
    raw: dict[Key, bytes] = field(default_factory=dict)
    before: dict[Key, Summary] = field(default_factory=dict)
    full: bool = True
    dropped: set[str] = field(default_factory=set)

    def partition_pk(self, key: Key) -> int | None:
        table = self.topics.get(key[0])
        pks = table["partitions"] if table else []
        return pks[key[1]] if key[1] < len(pks) else None


def _meta() -> tuple[ClusterState, dict[str, dict[str, Any]]]:
    raw = client().get(META)
    if raw is None:
        return new_cluster([], election_timeout_ms=settings.REPLICATION_ELECTION_TIMEOUT_MS), {}
    meta = json.loads(raw)
    return cluster_from_dict(meta["core"]), meta["topics"]


def replicated_topics() -> set[str]:
    raw = client().get(META)
    return set(json.loads(raw)["topics"]) if raw is not None else set()


def load(keys: Iterable[Key] | None = None) -> HotState:
    """The whole state (``keys`` None) or only the named replica sets."""
    state, topics = _meta()
    hot = HotState(state, topics, full=keys is None)
    fetched = _fetch_full(topics) if keys is None else _fetch_some(keys, topics)
    with gc_paused():
        for key, data in fetched:
            rs = decode_set(data)
            state.replica_sets[key] = rs
            hot.raw[key] = data
            hot.before[key] = summary(rs)
    state.reindex()
    return hot


def _fetch_full(topics: dict[str, Any]) -> list[tuple[Key, bytes]]:
    names = list(topics)
    pipe = client().pipeline(transaction=True)
    for name in names:
        pipe.hgetall(sets_key(name))
    return [((name, int(p)), data) for name, found in zip(names, pipe.execute())
            for p, data in found.items()]


def _fetch_some(keys: Iterable[Key], topics: dict[str, Any]) -> list[tuple[Key, bytes]]:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in keys:
        if topic in topics:
            by_topic.setdefault(topic, []).append(partition)
    pipe = client().pipeline(transaction=True)
    for name, parts in by_topic.items():
        pipe.hmget(sets_key(name), [str(p) for p in parts])
    out = []
    for (name, parts), found in zip(by_topic.items(), pipe.execute()):
        out += [((name, p), data) for p, data in zip(parts, found) if data is not None]
    return out


def save(hot: HotState, *, retain: int | None = None) -> list[Key]:
    """Write the replica sets whose encoding changed, and the meta; return their keys."""
    retain = settings.REPLICATION_LOG_RETENTION if retain is None else retain
    changed: dict[str, dict[str, bytes]] = {}
    with gc_paused():
        for key, rs in hot.state.replica_sets.items():
            # Compact in chunks of a tenth of the retention: each pass rewrites the prefix.
            compact(rs, retain, step=max(1, retain // 10))
            data = encode_set(rs)
            if hot.raw.get(key) != data:
                changed.setdefault(key[0], {})[str(key[1])] = data
                hot.raw[key] = data
    pipe = client().pipeline(transaction=True)
    for name in hot.dropped:
        pipe.delete(sets_key(name), values_key(name))
    for name, fields in changed.items():
        pipe.hset(sets_key(name), mapping=fields)
    pipe.set(META, json.dumps({"core": cluster_meta_to_dict(hot.state), "topics": hot.topics}))
    pipe.execute()
    return [(name, int(p)) for name, fields in changed.items() for p in fields]


# ---- SPU loops, the worker, record values, produce tickets --------------------

def killed() -> set[int]:
    return {int(s) for s in client().smembers(KILLED)}


def kill(spu: int) -> None:
    client().sadd(KILLED, spu)


def revive(spu: int) -> None:
    client().srem(KILLED, spu)


def beat(spus: Iterable[int], now_ms: int) -> None:
    mapping = {str(s): now_ms for s in spus}
    if mapping:
        client().hset(HEARTBEATS, mapping=mapping)


def heartbeats() -> dict[int, int]:
    return {int(s): int(ms) for s, ms in client().hgetall(HEARTBEATS).items()}


def forget_heartbeat(spu: int) -> None:
    client().hdel(HEARTBEATS, spu)


def clear_worker() -> None:
    client().delete(WORKER)


def worker_alive() -> bool:
    try:
        return bool(client().exists(WORKER))
    except redis.exceptions.ConnectionError:
        return False


def store_values(topic: str, values: dict[int, str]) -> None:
    if values:
        client().hset(values_key(topic), mapping={str(k): v for k, v in values.items()})


def read_values(topic: str, ids: list[int]) -> dict[int, str]:
    if not ids:
        return {}
    found = client().hmget(values_key(topic), [str(i) for i in ids])
    return {i: v.decode() for i, v in zip(ids, found) if v is not None}


def ticket_key(first_id: int) -> str:
    return f"{PREFIX}ticket:{first_id}"


def write_ticket(first_id: int, ticket: dict[str, Any], *, still_open: bool) -> None:
    """An acks=all write someone waits for; ack actions fill in its outcome."""
    pipe = client().pipeline(transaction=True)
    pipe.set(ticket_key(first_id), json.dumps(ticket), ex=3600)
    (pipe.sadd if still_open else pipe.srem)(TICKETS, first_id)
    pipe.execute()


def read_ticket(first_id: int) -> dict[str, Any] | None:
    raw = client().get(ticket_key(first_id))
    return None if raw is None else json.loads(raw)


def open_tickets() -> dict[int, dict[str, Any]]:
    ids = [int(i) for i in client().smembers(TICKETS)]
    found = client().mget([ticket_key(i) for i in ids]) if ids else []
    return {i: json.loads(v) for i, v in zip(ids, found) if v is not None}
