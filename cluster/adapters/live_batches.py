"""Live batching: at most ~10 messages a second per group, each carrying the latest state.

``stage`` merges rows into the group's pending batch in Redis: one hash field
per partition, SPU or topic, so a later state overwrites an earlier one, and
a list of events. The process whose stage finds the group's window free
becomes its holder: it flushes at once, then every ``WINDOW_MS`` flushes what
any process staged meanwhile, and frees the window when a flush finds nothing.
The flush (a Lua script) takes the batch, numbers it from the group's Redis
sequence and keeps the window in one step, so the last change of a burst goes
out at most ``WINDOW_MS`` late whichever process staged it, and sequences from
several processes never interleave. A holder that dies leaves the window to
expire after ``WINDOW_TTL_MS``; the next change then flushes what it left.

A cluster batch may ask for the SPU loads, totals and charts (``load``): the holder
that flushes it builds them with the ``loads`` its stager handed down (the live
projection's ``cluster_load``, cluster/projections/live.py), so this adapter imports no
selector or view and reads no registry. Whoever stages into the cluster group hands it,
whether or not it asks for loads itself: its process may hold the window when another's
batch asks.
"""
from __future__ import annotations

import asyncio
import atexit
import contextvars
import json
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping
from itertools import repeat
from operator import floordiv, itemgetter
from typing import Any, NamedTuple

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django import db
from django.db import transaction

from cluster.adapters import hot_state
from cluster.adapters.hot_state import Summary
from cluster.adapters.live_seqs import (current_seq, current_seqs,  # noqa: F401 (re-exported)
                                        live_key, next_seq, watched)
from cluster.core.replication import Key
from cluster.live import (BLOCK, CLUSTER_GROUP, EventRow, LiveData, LiveUpdate,
                          PartitionRow, Payload, stamp)

log = logging.getLogger(__name__)
WINDOW_MS = 100
WINDOW_TTL_MS = 3000
# Marks a cluster batch whose SPU loads, totals and charts follow in a second message.
LOAD_MARK = "x:load"
# The network view (link matrix and rehearsal summary): one field, the latest one wins.
NET_FIELD = "n:net"
# The newest events a group's batch carries: a page keeps at most 50 (the events page; the
# overview 10), and a failover at 100,000 partitions logs 6,000, which went, 1.8 MB of
# JSON, to every open page. The event log (/events/) and the JSON logs keep every one.
LIVE_EVENTS = 200

_FLUSH = """
local fields = redis.call('HGETALL', KEYS[1])
local events = redis.call('LRANGE', KEYS[2], 0, -1)
if #fields == 0 and #events == 0 then
  redis.call('DEL', KEYS[3])
  return false
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('PEXPIRE', KEYS[3], ARGV[1])
return {redis.call('INCR', KEYS[4]), fields, events}
"""
# What builds the cluster group's loads (``cluster_load``), handed down by the stager.
Loads = Callable[[], LiveData]
# The groups this process holds the window of, each with the loads its stager handed.
_held: dict[str, Loads | None] = {}
_lock = threading.Lock()
_timer: threading.Timer | None = None


# ---- staging --------------------------------------------------------------------

def _fields(data: LiveData) -> dict[str, str]:
    fields = {f"p:{r['topic']}/{r['partition']}": json.dumps(r) for r in data.get("partitions", [])}
    fields.update({f"s:{r['id']}": json.dumps(r) for r in data.get("spus", [])})
    fields.update({f"t:{r['name']}": json.dumps(r) for r in data.get("topics", [])})
    if "net" in data:
        fields[NET_FIELD] = json.dumps(data["net"])
    return fields


def stage(group: str, data: LiveData, *, load: bool = False,
          loads: Loads | None = None) -> None:
    """Add ``data`` to the group's next message; ``load`` asks for fresh SPU loads and
    charts, which ``loads`` builds should this process flush a batch that asks for them."""
    stage_many({group: data}, load={group} if load else set(), loads=loads)


def stage_many(batches: Mapping[str, LiveData], *, load: Collection[str] = (),
               loads: Loads | None = None) -> None:
    """``stage`` for several groups in one Redis round trip (a tick touches 50 block groups)."""
    fields = {group: _fields(data) for group, data in batches.items()}
    for group in load:
        if group in fields:
            fields[group][LOAD_MARK] = "1"
    _stage_fields(fields, {group: data["events"] for group, data in batches.items()
                           if data.get("events")}, loads)


def _stage_fields(fields: Mapping[str, dict[str, str]],
                  events: Mapping[str, list[EventRow]], loads: Loads | None = None) -> None:
    pipe = hot_state.client().pipeline(transaction=True)
    windows: list[tuple[str, int]] = []
    for group in dict.fromkeys([*fields, *events]):
        if fields.get(group):
            pipe.hset(live_key("pending", group), mapping=fields[group])
        if events.get(group):
            name = live_key("events", group)
            pipe.rpush(name, *[json.dumps(e) for e in events[group][-LIVE_EVENTS:]])
            pipe.ltrim(name, -LIVE_EVENTS, -1)  # with what other stagers left pending
        pipe.set(live_key("window", group), "1", nx=True, px=WINDOW_TTL_MS)
        windows.append((group, len(pipe) - 1))
    if not windows:
        return
    results = pipe.execute()
    free = {group: loads for group, at in windows if results[at]}
    if free:
        _hold(free)


def flush(group: str, loads: Loads | None = None) -> LiveUpdate | None:
    """Send the group's pending batch now, as one numbered message; None if nothing was pending."""
    text = _flush_many({group: loads})[group]
    return json.loads(text) if text is not None else None


def _flush_many(groups: Mapping[str, Loads | None]) -> dict[str, str | None]:
    """Take, number and send each group's pending batch, all in one Redis round trip."""
    client = hot_state.client()
    script = client.register_script(_FLUSH)
    pipe = client.pipeline(transaction=False)
    for group in groups:
        script(keys=[live_key("pending", group), live_key("events", group), live_key("window", group),
                     live_key("seq", group)], args=[WINDOW_TTL_MS], client=pipe)
    sent: dict[str, str | None] = {}
    for group, got in zip(groups, pipe.execute()):
        sent[group] = None if got is None else _send_batch(group, *got, loads=groups[group])
    return sent


def _send_batch(group: str, seq: int, flat: list[bytes], events: list[bytes], *,
                loads: Loads | None) -> str:
    fields = dict(zip(flat[::2], flat[1::2]))
    text = _encoded(group, int(seq), fields, events)
    _send(group, {"type": "live.update", "text": text})
    if LOAD_MARK.encode() in fields:
        if loads is None:  # a stager of the cluster group that handed no builder
            log.warning("live loads asked of %s, but its stager gave nothing to build them",
                        group)
            return text
        # Rows first: loads and charts read the whole store, and nobody flushes while we hold.
        _send_encoded({"type": "live.update", **stamp(group, next_seq(group)), **loads()})
    return text


def _send_encoded(message: LiveUpdate) -> None:
    # Encoded once here rather than once per socket by the consumer.
    _send(message["group"], {"type": "live.update", "text": json.dumps(message)})


def _encoded(group: str, seq: int, fields: dict[bytes, bytes], events: list[bytes]) -> str:
    """The message's JSON, spliced from the rows as staged: 10,000 rows are neither
    decoded nor encoded again (that was most of a busy tick's flush)."""
    rows: dict[bytes, list[bytes]] = {b"p": [], b"s": [], b"t": []}
    for name, value in fields.items():
        if name[:1] in rows:
            rows[name[:1]].append(value)
    head = json.dumps({"type": "live.update", **stamp(group, seq)})[:-1]
    parts = [f', "{key}": [' + b", ".join(values).decode() + "]" for key, values in
             (("partitions", rows[b"p"]), ("spus", rows[b"s"]), ("topics", rows[b"t"]),
              ("events", events))]
    net = fields.get(NET_FIELD.encode())
    if net is not None:
        parts.append(', "net": ' + net.decode())
    return head + "".join(parts) + "}"


# ---- the holder's trailing flushes ------------------------------------------------

def _hold(groups: Mapping[str, Loads | None]) -> None:
    """Flush ``groups`` now and keep flushing them every window until they run dry (each
    with the loads its stager handed; one handed before is kept)."""
    global _timer
    still = _safe_flush(groups)
    with _lock:
        for group in still:
            _held[group] = groups[group] or _held.get(group)
        if _held and _timer is None:
            # The timer's thread runs in this context: the store the flush's keys name is
            # the one this use case bound (redis_keys.py), carried rather than looked up.
            _timer = threading.Timer(WINDOW_MS / 1000, contextvars.copy_context().run,
                                     args=(_tick,))
            _timer.start()


def _tick() -> None:
    """The trailing flush, on a timer's own thread (a new one each window)."""
    global _timer
    try:
        with _lock:
            groups, _timer = dict(sorted(_held.items())), None
            _held.clear()
        _hold(groups)
    finally:
        # A flush with loads reads the store (``cluster_load``) on this thread, which then
        # ends: its connection would stay open, kept by the reference cycles of Django's
        # connection objects until a cyclic collection, which the engine's gc.freeze may
        # put off for ever (issue 36.3: a worker's pool process held 66 idle connections).
        db.connections.close_all()


def _safe_flush(groups: Mapping[str, Loads | None]) -> list[str]:
    """The groups that had something to send (and so keep their window for another round)."""
    try:
        return [group for group, text in _flush_many(groups).items() if text is not None]
    except Exception:  # a page missing an update must not fail a replication step
        log.exception("live flush of %s failed", ", ".join(groups))
        return []


def _send(group: str, message: dict[str, Any]) -> None:
    _sender().put(group, message)


def publish(group: str, payload: Payload) -> None:
    """Send ``payload`` now, uncoalesced, stamped with the group's next sequence number."""
    message = {**payload, **stamp(group, next_seq(group))}
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(group, message)


class Sender:
    """One event loop thread per process that hands messages to the channel layer in order.

    async_to_sync per message would build a loop and new Redis connections each
    time (~20 ms); here the layer's connections live as long as the process.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.queue: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue()
        self.pending = 0
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self.run(),),
                                       name="live-sender", daemon=True)
        self.thread.start()
        atexit.register(self.drain)

    def put(self, group: str, message: dict[str, Any]) -> None:
        with _lock:
            self.pending += 1
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (group, message))

    async def run(self) -> None:
        layer = get_channel_layer()
        while True:
            group, message = await self.queue.get()
            try:
                if layer is not None:
                    await layer.group_send(group, message)
            except Exception:  # a page missing an update must not stop the sender
                log.exception("live send to %s failed", group)
            with _lock:
                self.pending -= 1

    def drain(self, timeout_s: float = 2.0) -> None:
        """Wait until every queued message went out (at exit, and for tests)."""
        deadline = time.monotonic() + timeout_s
        while self.pending and time.monotonic() < deadline:
            time.sleep(0.01)


_senders: dict[str, Sender] = {}


def _sender() -> Sender:
    """The process's sender for the current channel layer settings (tests switch Redis)."""
    key = json.dumps(settings.CHANNEL_LAYERS, sort_keys=True, default=str)
    with _lock:
        if key not in _senders:
            _senders[key] = Sender()
        return _senders[key]


# ---- what the replication shell and the event log hand over ------------------------

def live_row(key: Key, s: Summary) -> PartitionRow:
    """The columns of a partition a live page updates in place, from the hot state's
    packed summary (``partition_row`` in selectors/shapes.py is the whole row)."""
    return {"topic": key[0], "partition": key[1], "leader": s[0], "lrs": list(s[1]),
            "hw": s[3], "leo": s[4] if s[4] is not None else max((r[1] for r in s[5]), default=0),
            "resolution": s[2].value}


class Changed(NamedTuple):
    """A unit's changed sets, in order, and their summaries by key (``keys`` all in it):
    the summaries are read only for the rows staged (those of watched blocks and the moved
    ones), not paired with their 100,000 keys at a busy tick."""
    keys: list[Key]
    summaries: Mapping[Key, Summary]


def publish_partitions(changes: Changed, *, moved: list[Key],
                       loads: Loads | None = None) -> None:
    """After commit: every change to its block group; leader/LRS/resolution moves to the
    cluster, whose loads ``loads`` builds."""
    if not changes.keys:
        return
    if transaction.get_connection().in_atomic_block:
        # Staged once the outer transaction commits, maybe after later units: the
        # summaries as they are now (out of one, it runs at once).
        keys, now = changes
        changes = Changed(keys, dict(zip(keys, map(now.__getitem__, keys))))
    transaction.on_commit(lambda: _stage_changed(changes, set(moved), loads))


_topic = itemgetter(0)  # of a key
_index = itemgetter(1)


def blocks_of(keys: list[Key]) -> set[tuple[str, int]]:
    """The (topic, block) of every key, by C-level passes: a set comprehension over a busy
    tick's 100,000 changes was most of ``_stage_changed`` (21-35 ms there against
    15-21; by topic runs, 18-31: each pass misses the cache on every key)."""
    return set(zip(map(_topic, keys), map(floordiv, map(_index, keys), repeat(BLOCK))))


def _stage_changed(changes: Changed, moved: set[Key], loads: Loads | None = None) -> None:
    # Rows are encoded straight to JSON here: dicts and json.dumps for 10,000 rows were
    # most of the tick's live cost. The text is PartitionRow's, key for key.
    keys, summaries = changes
    try:
        groups = {block: f"topic-{block[0]}.{block[1]}" for block in blocks_of(keys)}
        seen = watched(list(groups.values()))
    except Exception:  # a page missing an update must not fail a replication step
        log.exception("live update failed")
        return
    watched_blocks = {block: group for block, group in groups.items() if group in seen}
    if not watched_blocks and not moved:
        return  # nobody watches these blocks and the cluster view has nothing new
    names: dict[str, str] = {}
    by_group: dict[str, dict[str, str]] = defaultdict(dict)
    cluster: dict[str, str] = {}
    for key in keys:
        topic, index = key
        group = watched_blocks.get((topic, index // BLOCK))
        if group is None and key not in moved:
            continue
        summary = summaries[key]
        name = names.get(topic) or names.setdefault(topic, json.dumps(topic))
        field, row = f"p:{topic}/{index}", _row_json(name, index, summary)
        if group is not None:
            by_group[group][field] = row
        if key in moved:
            cluster[field] = row
    if moved:
        cluster[LOAD_MARK] = "1"
        by_group[CLUSTER_GROUP] = cluster
    try:
        _stage_fields(by_group, {}, loads)
    except Exception:  # a page missing an update must not fail a replication step
        log.exception("live update failed")


def publish_network(view: dict[str, Any], loads: Loads | None = None) -> None:
    """After commit: the network view (cluster/core/replication/netview.py) to the cluster
    group, coalesced like every row (a burst of writes in a rehearsal sends the latest)."""
    def staged() -> None:
        try:
            _stage_fields({CLUSTER_GROUP: {NET_FIELD: json.dumps(view)}}, {}, loads)
        except Exception:  # a page missing an update must not fail a replication step
            log.exception("live network update failed")
    transaction.on_commit(staged)


def _row_json(topic_json: str, index: int, s: Summary) -> str:
    leader = "null" if s[0] is None else s[0]
    leo = s[4] if s[4] is not None else max((r[1] for r in s[5]), default=0)
    return (f'{{"topic": {topic_json}, "partition": {index}, "leader": {leader}, '
            f'"lrs": [{", ".join(map(str, s[1]))}], "hw": {s[3]}, "leo": {leo}, '
            f'"resolution": "{s[2].value}"}}')
