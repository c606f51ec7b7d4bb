"""Live updates: the groups pages join and the messages they receive.

They are sent by cluster/adapters/live_batches.py (coalesced, numbered).

Format version 1 (``FORMAT_VERSION``). Every message a page receives is a JSON
object with:

* ``type``: ``live.update`` (the data message below); ``live.hello`` once per
  connection, listing the groups joined and each group's current sequence;
  ``live.seqs`` every ``LIVE_BEACON_S`` (5 s), the same list: a group still beyond
  what the page applied a second later lost a message (its sender died between
  numbering and sending it), and the page resyncs it;
  older single-item payloads (``cluster.changed``, ``partition.changed``) are
  still forwarded and carry the same stamp.
* ``v``: the format version; a page that does not know it reloads.
* ``group``: the group it was sent to, and ``seq``: that group's sequence
  number, held in Redis (``INCR``) so every process numbers one sequence. A
  page that sees ``seq`` jump by more than one, or reconnects, fetches
  ``/api/live/snapshot/?group=<group>`` and continues from the snapshot's seq.
* ``at``: when the message was sent (ms since the epoch); the page shows its age.
* the data, each list holding the latest state of what changed since the
  group's previous message (never a diff, so applying it twice is harmless):
  ``partitions`` (PartitionRow), ``spus`` (SpuRow), ``topics`` (TopicRow),
  ``events`` (EventRow, oldest first: the newest ``LIVE_EVENTS`` (200) since the
  previous message, a page keeping at most 50; /events/ lists every one). On the
  cluster group, when leaders moved, the next message carries every SPU's load
  (``spus``), every topic with its partition counts (``topics``, TopicCounts),
  ``totals``, ``health`` (the
  overview's list) and ``charts`` (the heatmaps' Plotly figures, topic x SPU
  included) and ``racks_down`` (the racks offered "Rack online"): they read the
  whole store, so the rows go first. ``net`` (NetView,
  cluster group) is the link matrix and the network rehearsal's summary, sent
  whenever a cut, a heal, a session expiry or the rehearsal's counts change.

Groups: ``cluster`` (SPUs, topics, events, leader/LRS/resolution moves of any
partition, totals, charts), ``topic-<name>`` (that topic's resolution and
events) and ``topic-<name>.<block>`` (every change, HW/LEO included, of
partitions ``block * BLOCK`` to ``block * BLOCK + BLOCK - 1``), so a page
showing 200 partitions of a 100,000-partition topic hears only about those.
The snapshot endpoint answers the same shape (``type`` ``live.snapshot``).
The cluster socket may add block groups (``/ws/cluster/?groups=topic-x.0,…``: the
partitions page, whose rows come from any topic). A page embeds each group's sequence
as its render read it (``live-seqs``); a first hello beyond it resyncs that group.
"""
from __future__ import annotations

import time
from typing import Any, Literal, TypedDict, Union

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from cluster.core.names import name_problem

FORMAT_VERSION = 1
CLUSTER_GROUP = "cluster"
# Partitions per block group: one topic page (200 rows) listens to one block.
BLOCK = 200
# A page showing more partitions than this listens to the topic's first blocks only.
MAX_BLOCKS = 50


class PartitionRow(TypedDict):
    topic: str
    partition: int
    leader: int | None
    lrs: list[int]
    hw: int
    leo: int
    resolution: str      # a replica set status: Online, Election, CandidateFound, Offline


class Cell(TypedDict):
    text: str   # e.g. "+12%"
    css: str    # skew-ok, skew-warn, skew-bad or muted


class SpuRow(TypedDict, total=False):
    id: int              # always present; the rest as known to the sender
    resolution: str
    rack: str
    leaders: int
    followers: int
    replicas: int
    preferred: int           # partitions whose first replica is this SPU
    preferred_leading: int   # ... of which this SPU leads
    cells: dict[str, Cell]   # leader_skew, replica_skew, preferred_share as pages show them


class TopicCounts(TypedDict, total=False):
    """A topic's partition health; sent with the cluster group's loads (topics list page)."""
    partitions: int
    leaderless: int
    under_replicated: int
    preferred_leading: int


class TopicRow(TopicCounts):
    name: str
    resolution: str
    reason: str


class HealthRow(TypedDict):
    """One reason on the overview's health list, linking to the list that shows it."""
    message: str
    link: str
    severity: str        # bad or warn


class EventRow(TypedDict):
    at: str              # ISO 8601
    actor: str
    object_type: str
    object_name: str
    operation: str
    params: dict[str, Any]
    result: str
    log_offset: int | None  # its metadata-log entry: the history page's moment (issue 21)
    id: int | None  # a direct event's link resolves its moment by id (/history/?event=)


class Totals(TypedDict):
    spus: int
    spus_online: int
    partitions: int
    leaderless: int
    under_replicated: int
    replicas: int
    preferred_leading: int   # partitions led by their first replica
    racks: int               # racks of registered SPUs ("(no rack)" counts as one)
    topics: int              # topics with partitions


class Stamp(TypedDict):
    v: int
    group: str
    seq: int
    at: int


class NetView(TypedDict):
    """The link matrix and the rehearsal summary (cluster/core/replication/netview.py)."""
    ends: list[str]            # controller, producers, then every SPU id
    rows: list[dict[str, Any]]  # {spu, expired, cells: ok|cut|out-cut|in-cut|self per end}
    all_rows: bool             # False: only the SPUs a cut names (a big cluster)
    cuts: list[dict[str, Any]]  # as ``net status --json``
    report: dict[str, Any] | None  # the rehearsal's counts (None before the first cut)


class LiveData(TypedDict, total=False):
    partitions: list[PartitionRow]
    spus: list[SpuRow]
    topics: list[TopicRow]
    events: list[EventRow]
    totals: Totals
    health: list[HealthRow]  # the overview's list, whole (empty: nothing needs attention)
    charts: dict[str, Any]   # figure id -> Plotly figure (cluster.charts)
    net: NetView
    # Racks with an SPU that serves nothing, sorted: the only ones offered "Rack online"
    # (sent with the loads, so the buttons follow racks going down and up).
    racks_down: list[str]


class LiveUpdate(Stamp, LiveData):
    type: Literal["live.update"]


class ClusterChanged(TypedDict):
    """Single-item form kept for callers of ``publish``: an object changed (see the event log)."""
    type: Literal["cluster.changed"]
    object_type: str
    object_name: str
    operation: str


class PartitionChanged(PartitionRow):
    """Single-item form kept for callers of ``publish``: one partition's status."""
    type: Literal["partition.changed"]


class PlanProgress(TypedDict):
    """A plan being carried out moved on (planner/execution.py)."""
    type: Literal["plan.progress"]
    plan: int
    state: str           # pending, running, paused, done, cancelled, failed
    moves_total: int
    moves_done: int
    moves_in_flight: int


Payload = Union[LiveUpdate, ClusterChanged, PartitionChanged, PlanProgress]


def topic_group(name: str) -> str:
    return f"topic-{name}"


def block_group(topic: str, partition: int) -> str:
    return f"topic-{topic}.{partition // BLOCK}"


def block_groups(topic: str, first: int, count: int) -> list[str]:
    """The block groups covering partitions ``first`` .. ``first + count - 1``."""
    start, end = first // BLOCK, (first + max(count, 1) - 1) // BLOCK
    return [f"topic-{topic}.{b}" for b in range(start, min(end, start + MAX_BLOCKS - 1) + 1)]


def parse_group(group: str) -> tuple[str | None, int | None] | None:
    """("cluster") -> (None, None); "topic-x" -> ("x", None); "topic-x.3" -> ("x", 3)."""
    if group == CLUSTER_GROUP:
        return None, None
    if not group.startswith("topic-"):
        return None
    name, dot, block = group[len("topic-"):].partition(".")
    # isascii: "²".isdigit() is True, and int() refuses it.
    if name_problem(name) or (dot and not (block.isascii() and block.isdigit() and len(block) < 7)):
        return None
    return name, int(block) if dot else None


def stamp(group: str, seq: int) -> Stamp:
    return {"v": FORMAT_VERSION, "group": group, "seq": seq, "at": int(time.time() * 1000)}


def send(group: str, message: dict[str, Any]) -> None:
    """Hand an already stamped message to every socket in ``group``; callable from sync code."""
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(group, message)
