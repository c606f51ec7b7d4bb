"""Moving replica sets when their placement over the hot state's servers changed.

Where a set lives follows ``HOT_STATE_REDIS_URLS`` and ``REPLICATION_SHARDS``
(hot_servers.py): change either and a set may belong on another server. The placement
the sets were written under is kept on the first server (``placement``: the shard count
and the URLs, absent while everything is on the first), and read with the meta by every
load. A unit of work holding every lease moves each set whose server changed (its status
and its records), then records the new placement, all before it loads anything; any other
unit refuses to run meanwhile (``PlacementMoved``), so no shard reads a server its sets
have not reached yet. The coordinator's tick sees the change first (``redis_run_id``
names the placement) and runs the whole tick that moves them.

The first server stays the first: it holds the meta this reads the topics from.
"""
from __future__ import annotations

import json
from typing import Any

import redis
from django.conf import settings

from cluster.adapters import hot_servers, shards
from cluster.adapters.redis_keys import client, client_at, key
from cluster.adapters.set_loading import sets_key
from cluster.adapters.set_records import records_key
from cluster.core.replication import Key

PLACEMENT = "placement"
# The layout of a Redis where everything is on the first server.
ONE_SERVER: dict[str, Any] = {"shards": 1, "urls": []}


class PlacementMoved(RuntimeError):
    """The sets' placement changed and no whole-state unit has moved them yet."""


def layout() -> dict[str, Any]:
    """This process's placement, as recorded."""
    if not hot_servers.spread():
        return ONE_SERVER
    return {"shards": int(settings.REPLICATION_SHARDS),
            "urls": list(settings.HOT_STATE_REDIS_URLS)}


def recorded(raw: bytes | str | None) -> dict[str, Any]:
    return json.loads(raw) if raw else ONE_SERVER


def placement_key() -> str:
    return key(PLACEMENT)


def _server(placed: dict[str, Any], partition: Key) -> int:
    if len(placed["urls"]) < 2 or placed["shards"] < 2:
        return hot_servers.HOME
    return shards.shard_of(partition, placed["shards"]) % len(placed["urls"])


def _client(placed: dict[str, Any], server: int) -> redis.Redis:
    return client() if server == hot_servers.HOME else client_at(placed["urls"][server])


def check(raw: bytes | str | None, topics: dict[str, Any], *, whole: bool) -> int:
    """Given the recorded placement ``raw``: nothing if it is this process's; else move
    the sets (``whole``: the caller holds every lease) or refuse. Returns how many moved."""
    before, after = recorded(raw), layout()
    if before == after:
        return 0
    if not whole:
        raise PlacementMoved("the hot state's servers or shards changed; the next whole "
                             "tick moves the replica sets first")
    moved = 0
    for name, table in topics.items():
        for index in range(len(table["partitions"])):
            part = (name, index)
            old, new = _server(before, part), _server(after, part)
            if old != new:
                _move(part, _client(before, old), _client(after, new))
                moved += 1
    if after == ONE_SERVER:
        client().delete(placement_key())
    else:
        client().set(placement_key(), json.dumps(after))
    return moved


def _move(part: Key, source: redis.Redis, target: redis.Redis) -> None:
    """Copy one set's status and records to its new server, then drop them at the old."""
    sets, recs, field = sets_key(part[0]), records_key(*part), str(part[1])
    pipe = source.pipeline(transaction=True)
    pipe.hget(sets, field)
    pipe.get(recs)
    status, records = pipe.execute()
    if status is None:
        return
    pipe = target.pipeline(transaction=True)
    pipe.hset(sets, field, status)
    if records is not None:
        pipe.set(recs, records)
    pipe.execute()
    pipe = source.pipeline(transaction=True)
    pipe.hdel(sets, field)
    pipe.delete(recs)
    pipe.execute()
