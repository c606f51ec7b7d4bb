"""The hot state beside the replica sets: SPU loops (stopped ones, heartbeats), the worker's
presence, record values and produce tickets (split from hot_state.py, which re-exports
these names). Keys live in the store's namespace like every hot-state key."""
from __future__ import annotations

import json
import sys
from array import array
from collections.abc import Iterable
from typing import TypedDict

import redis

from cluster.adapters import lease
from cluster.adapters.lease import WriteOp
from cluster.adapters.redis_keys import client, key

# How long a produce outcome can be polled for (GET /api/produce/<id>/).
TICKET_TTL_S = 3600


class Ticket(TypedDict, total=False):
    """An acks=all write someone waits for; the ack actions fill in its outcome."""
    count: int
    state: str             # an AckOutcome value: pending, acknowledged or failed
    acked: int
    code: str | None
    reason: str | None
    topic: str             # where the write went, so its outcome can be read from the
    partition: int         # hot state if the ticket's update was lost in a crash
    base_offset: int


def values_key(topic: str) -> str:
    return key(f"values:{topic}")


def killed() -> set[int]:
    return {int(s) for s in client().smembers(key("killed"))}


def kill(spu: int) -> None:
    client().sadd(key("killed"), spu)


def revive(spu: int) -> None:
    client().srem(key("killed"), spu)


def beat(spus: Iterable[int], now_ms: int) -> None:
    mapping = {str(s): now_ms for s in spus}
    if mapping:
        client().hset(key("heartbeats"), mapping=mapping)


def heartbeats() -> dict[int, int]:
    return {int(s): int(ms) for s, ms in client().hgetall(key("heartbeats")).items()}


def forget_heartbeat(spu: int) -> None:
    client().hdel(key("heartbeats"), spu)


def clear_worker() -> None:
    client().delete(key("worker"))


def worker_alive() -> bool:
    try:
        return bool(client().exists(key("worker")))
    except redis.exceptions.ConnectionError:
        return False


def values_ops(topic: str, values: dict[int, str]) -> list[WriteOp]:
    """The writes that store records' values (staged with a produce's commit)."""
    if not values:
        return []
    return [WriteOp("hset", values_key(topic), {str(k): v for k, v in values.items()})]


# Drops record values by id (ARGV[1]: the ids as native int64s end to end), but only where
# the topic's values hash exists: values are stored only for records produced through the
# web and API (services/records.py), so a rehearsal's simulated producers leave none, and
# the HDEL of every id compaction released (one a record produced, 100,000 a tick at
# 100,000 busy partitions) found nothing while redis-py encoded each id as an argument.
# A hash that holds values is drained in batches of 512 ids a HDEL.
_DROP_VALUES = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local ids, n, batch, k = ARGV[1], 0, {}, 0
for at = 1, #ids, 8 do
  k = k + 1
  batch[k] = string.format('%d', (struct.unpack('<i8', ids, at)))
  if k == 512 then
    n = n + redis.call('HDEL', KEYS[1], unpack(batch, 1, k))
    k = 0
  end
end
if k > 0 then n = n + redis.call('HDEL', KEYS[1], unpack(batch, 1, k)) end
return n
"""
# The script reads little-endian int64s (``array("q")``, swapped on a big-endian machine).
assert array("q").itemsize == 8


def drop_values_op(values_hash: str, ids: list[int]) -> WriteOp:
    """The write that drops these records' values from ``values_hash`` (a topic's
    ``values_key``): the values compaction released. One packed argument, and no work in
    Redis where the topic holds no values."""
    blob = array("q", ids)
    if sys.byteorder != "little":
        blob.byteswap()
    return WriteOp("eval", values_hash, (_DROP_VALUES, [values_hash], [blob.tobytes()]))


def read_values(topic: str, ids: list[int]) -> dict[int, str]:
    if not ids:
        return {}
    found = client().hmget(values_key(topic), [str(i) for i in ids])
    return {i: v.decode() for i, v in zip(ids, found) if v is not None}


def ticket_key(first_id: int) -> str:
    return key(f"ticket:{first_id}")


def write_ticket(held: lease.Held, first_id: int, ticket: Ticket, *, still_open: bool) -> None:
    """An acks=all write someone waits for; ack actions fill in its outcome (fenced by the
    leases its writer ``held``)."""
    lease.fenced_write(held, ticket_ops(first_id, ticket, still_open=still_open))


def ticket_ops(first_id: int, ticket: Ticket, *, still_open: bool) -> list[WriteOp]:
    """The writes of a ticket (a produce stages its new ticket's with its commit)."""
    return [WriteOp("setex", ticket_key(first_id), (TICKET_TTL_S, json.dumps(ticket))),
            WriteOp("sadd" if still_open else "srem", key("tickets"), first_id)]


def read_ticket(first_id: int) -> Ticket | None:
    raw = client().get(ticket_key(first_id))
    return None if raw is None else json.loads(raw)


def open_tickets() -> dict[int, Ticket]:
    """Tickets still pending; one whose key expired (nobody polled it for an hour) leaves
    the open set here, so the set never grows with abandoned writes."""
    ids = [int(i) for i in client().smembers(key("tickets"))]
    found = client().mget([ticket_key(i) for i in ids]) if ids else []
    expired = [i for i, v in zip(ids, found) if v is None]
    if expired:
        client().srem(key("tickets"), *expired)
    return {i: json.loads(v) for i, v in zip(ids, found) if v is not None}
