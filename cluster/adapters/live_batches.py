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
"""
from __future__ import annotations

import asyncio
import atexit
import json
import logging
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction

from cluster import charts
from cluster.adapters import hot_state
from cluster.adapters.hot_state import Summary
from cluster.core.replication import Key
from cluster.live import (CLUSTER_GROUP, HealthRow, LiveData, LiveUpdate, PartitionRow,
                          Payload, TopicRow, block_group, stamp)
from cluster.models import Topic
from cluster.selectors.health import cluster_health
from cluster.selectors.heatmaps import topic_spu_chart
from cluster.selectors.stats import ClusterStats, TopicStats, cluster_stats, partition_columns

log = logging.getLogger(__name__)
WINDOW_MS = 100
WINDOW_TTL_MS = 3000
# Marks a cluster batch whose SPU loads, totals and charts follow in a second message.
LOAD_MARK = "x:load"

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
_held: set[str] = set()
_lock = threading.Lock()
_timer: threading.Timer | None = None


def _key(kind: str, group: str) -> str:
    # Per installation (settings.LIVE_NAMESPACE), as the channel layer's groups are.
    return f"{hot_state.PREFIX}live:{settings.LIVE_NAMESPACE}:{kind}:{group}"


def next_seq(group: str) -> int:
    return int(hot_state.client().incr(_key("seq", group)))


def current_seq(group: str) -> int:
    return int(hot_state.client().get(_key("seq", group)) or 0)


def current_seqs(groups: Iterable[str]) -> dict[str, int]:
    groups = list(groups)
    values = hot_state.client().mget([_key("seq", g) for g in groups]) if groups else []
    return {g: int(v or 0) for g, v in zip(groups, values)}


# ---- staging --------------------------------------------------------------------

def _fields(data: LiveData) -> dict[str, str]:
    fields = {f"p:{r['topic']}/{r['partition']}": json.dumps(r) for r in data.get("partitions", [])}
    fields.update({f"s:{r['id']}": json.dumps(r) for r in data.get("spus", [])})
    fields.update({f"t:{r['name']}": json.dumps(r) for r in data.get("topics", [])})
    return fields


def stage(group: str, data: LiveData, *, load: bool = False) -> None:
    """Add ``data`` to the group's next message; ``load`` asks for fresh SPU loads and charts."""
    fields = _fields(data)
    if load:
        fields[LOAD_MARK] = "1"
    pipe = hot_state.client().pipeline(transaction=True)
    if fields:
        pipe.hset(_key("pending", group), mapping=fields)
    if data.get("events"):
        pipe.rpush(_key("events", group), *[json.dumps(e) for e in data["events"]])
    pipe.set(_key("window", group), "1", nx=True, px=WINDOW_TTL_MS)
    if pipe.execute()[-1]:
        _hold([group])


def flush(group: str) -> LiveUpdate | None:
    """Send the group's pending batch now, as one numbered message; None if nothing was pending."""
    keys = [_key("pending", group), _key("events", group), _key("window", group),
            _key("seq", group)]
    got = hot_state.client().eval(_FLUSH, len(keys), *keys, WINDOW_TTL_MS)
    if got is None:
        return None
    seq, flat, events = got
    fields = dict(zip(flat[::2], flat[1::2]))
    message = _message(group, int(seq), fields, events)
    _send_encoded(message)
    if LOAD_MARK.encode() in fields:
        # Rows first: loads and charts read the whole store, and nobody flushes while we hold.
        _send_encoded({"type": "live.update", **stamp(group, next_seq(group)), **cluster_load()})
    return message


def _send_encoded(message: LiveUpdate) -> None:
    # Encoded once here rather than once per socket by the consumer.
    _send(message["group"], {"type": "live.update", "text": json.dumps(message)})


def _message(group: str, seq: int, fields: dict[bytes, bytes],
             events: list[bytes]) -> LiveUpdate:
    rows: dict[str, list[Any]] = defaultdict(list)
    for name, value in fields.items():
        if name != LOAD_MARK.encode():
            rows[name[:1].decode()].append(json.loads(value))
    message: LiveUpdate = {"type": "live.update", **stamp(group, seq),
                           "partitions": rows["p"], "spus": rows["s"], "topics": rows["t"],
                           "events": [json.loads(e) for e in events]}
    return message


# ---- the holder's trailing flushes ------------------------------------------------

def _hold(groups: list[str]) -> None:
    """Flush ``groups`` now and keep flushing them every window until they run dry."""
    global _timer
    still = [g for g in groups if _safe_flush(g)]
    with _lock:
        _held.update(still)
        if _held and _timer is None:
            _timer = threading.Timer(WINDOW_MS / 1000, _tick)
            _timer.start()


def _tick() -> None:
    global _timer
    with _lock:
        groups, _timer = sorted(_held), None
        _held.clear()
    _hold(groups)


def _safe_flush(group: str) -> bool:
    try:
        return flush(group) is not None
    except Exception:  # a page missing an update must not fail a replication step
        log.exception("live flush of %s failed", group)
        return False


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

def cluster_load() -> LiveData:
    """SPU loads, topic counts, totals, health and the heatmaps' figures, read as the pages do."""
    cols = partition_columns()
    stats = cluster_stats(with_failover=True, cols=cols)
    racks = stats.racks()
    topics = list(Topic.objects.order_by("name").values_list("id", "name", "resolution", "reason"))
    by_resolution = Counter(res for _, _, res, _ in topics)
    return {"spus": [_spu_row(s) for s in stats.spus.values()],
            "topics": [_topic_row(stats, *t) for t in topics], "totals": _totals(stats),
            "health": [HealthRow(message=r.message, link=r.link, severity=r.severity)
                       for r in cluster_health(stats, by_resolution)],
            "charts": {"chart-leaders": charts.rack_spu_heatmap(racks, "leaders"),
                       "chart-followers": charts.rack_spu_heatmap(racks, "followers"),
                       "chart-topics": topic_spu_chart(stats, cols).figure,
                       "chart-failover": charts.failover_heatmap(stats)}}


def _spu_row(s: Any) -> dict[str, Any]:
    return {"id": s.id, "resolution": s.resolution, "rack": s.rack or "",
            "leaders": s.leaders, "followers": s.followers, "replicas": s.replicas}


def _topic_row(stats: ClusterStats, topic_id: int, name: str, resolution: str,
               reason: str) -> TopicRow:
    counts = stats.topics.get(topic_id) or TopicStats()
    return {"name": name, "resolution": resolution, "reason": reason,
            "partitions": counts.partitions, "leaderless": counts.leaderless,
            "under_replicated": counts.under_replicated,
            "preferred_leading": counts.preferred_leading}


def _totals(stats: ClusterStats) -> dict[str, int]:
    return {"spus": len(stats.spus), "spus_online": stats.spus_online,
            "partitions": stats.partitions, "leaderless": stats.leaderless,
            "under_replicated": stats.under_replicated, "replicas": stats.replicas,
            "preferred_leading": sum(s.preferred_leading for s in stats.spus.values())}


def partition_row(key: Key, s: Summary) -> PartitionRow:
    return {"topic": key[0], "partition": key[1], "leader": s[0], "lrs": list(s[1]),
            "hw": s[3], "leo": s[4] if s[4] is not None else max((r[1] for r in s[5]), default=0),
            "resolution": s[2].value}


def publish_partitions(changes: list[tuple[Key, Summary]], *, moved: list[Key]) -> None:
    """After commit: every change to its block group; leader/LRS/resolution moves to the cluster."""
    if changes:
        transaction.on_commit(lambda: _stage_partitions(changes, set(moved)))


def _stage_partitions(changes: list[tuple[Key, Summary]], moved: set[Key]) -> None:
    by_group: dict[str, list[PartitionRow]] = defaultdict(list)
    for key, summary in changes:
        by_group[block_group(*key)].append(partition_row(key, summary))
    try:
        for group, rows in by_group.items():
            stage(group, {"partitions": rows})
        if moved:
            rows = [partition_row(k, s) for k, s in changes if k in moved]
            stage(CLUSTER_GROUP, {"partitions": rows}, load=True)
    except Exception:  # a page missing an update must not fail a replication step
        log.exception("live update failed")
