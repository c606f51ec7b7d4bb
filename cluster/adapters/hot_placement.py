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

from cluster.adapters import hot_servers, shards, status_rows
from cluster.adapters.redis_keys import client, client_at, key
from cluster.adapters.set_loading import sets_key
from cluster.adapters.set_records import records_key
from cluster.core.replication import Key

PLACEMENT = "placement"
MOVE_BATCH = 500  # sets moved per round trip
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


def check(raw: bytes | str | None, topics: dict[str, Any], *, whole: bool) -> int | None:
    """Given the recorded placement ``raw``: nothing if it is this process's (None); else
    move the sets (``whole``: the caller holds every lease) or refuse. Returns how many
    moved."""
    before, after = recorded(raw), layout()
    if before == after:
        return None
    if not whole:
        raise PlacementMoved("the hot state's servers or shards changed; the next whole "
                             "tick moves the replica sets first")
    # The rows first (each server's blocks'), into their fields: the sets move field by field.
    for server in range(max(1, len(before["urls"]))):
        fold_rows(_client(before, server), list(topics))
    moves: dict[tuple[int, int], list[Key]] = {}
    for name, table in topics.items():
        for index in range(len(table["partitions"])):
            old, new = _server(before, (name, index)), _server(after, (name, index))
            if old != new:
                moves.setdefault((old, new), []).append((name, index))
    for (old, new), parts in moves.items():
        for at in range(0, len(parts), MOVE_BATCH):
            _move(parts[at:at + MOVE_BATCH], _client(before, old), _client(after, new))
    if after == ONE_SERVER:
        client().delete(placement_key())
    else:
        client().set(placement_key(), json.dumps(after))
    return sum(len(parts) for parts in moves.values())


def fold_rows(r: redis.Redis, topics: list[str]) -> int:
    """Write each set a row on ``r`` holds (status_rows.py) into its own field and drop
    the rows there: a move takes sets field by field. Returns how many fields it wrote."""
    pipe = r.pipeline(transaction=True)
    for name in topics:
        pipe.hgetall(sets_key(name))
        pipe.hgetall(status_rows.rows_key(name))
    found = pipe.execute()
    pipe = r.pipeline(transaction=True)
    written = 0
    for name, fields, rows in zip(topics, found[::2], found[1::2]):
        if not rows:
            continue
        stored = [((name, int(p)), data) for p, data in fields.items()]
        overlaid = status_rows.overlay(stored, {name: rows}, every=True)
        folded: dict[Any, Any] = {str(k[1]): data for (k, data), (_, was)
                                  in zip(overlaid, stored) if data is not was}
        if folded:
            pipe.hset(sets_key(name), mapping=folded)
            written += len(folded)
        pipe.delete(status_rows.rows_key(name))
    pipe.execute()
    return written


def _move(parts: list[Key], source: redis.Redis, target: redis.Redis) -> None:
    """Copy these sets' statuses and records to their new server, then drop them at the
    old (a crash in between leaves a copy at each: the new placement's is read)."""
    pipe = source.pipeline(transaction=True)
    for topic, index in parts:
        pipe.hget(sets_key(topic), str(index))
        pipe.get(records_key(topic, index))
    found = pipe.execute()
    pipe = target.pipeline(transaction=True)
    for n, (topic, index) in enumerate(parts):
        status, records = found[2 * n], found[2 * n + 1]
        if status is not None:
            pipe.hset(sets_key(topic), str(index), status)
        if records is not None:
            pipe.set(records_key(topic, index), records)
    pipe.execute()
    pipe = source.pipeline(transaction=True)
    for topic, index in parts:
        pipe.hdel(sets_key(topic), str(index))
        pipe.delete(records_key(topic, index))
    pipe.execute()
