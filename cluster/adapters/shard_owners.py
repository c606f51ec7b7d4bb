"""Which worker node steps which shard: the node that stepped it last, while it lives.

A shard task that lands on another worker than the last one finds none of the shard's
sets in its process's set cache (cluster/adapters/set_cache.py) and decodes them all:
with two workers taking four shard tasks a tick as they came free, a step cost 65 us
of CPU a partition against 49 us on one worker (tests/bench/bench_sharded_ticks.py).
So each worker node also consumes a queue of its own, and the coordinator sends a
shard's task there when the shard has a fresh owner; any other shard's task goes to
the shared queue, and whichever node runs it may claim it.

Nodes stay balanced: a node claims a shard only while it owns fewer than its fair
share (the shards over the live nodes, rounded up) and gives one back when it owns
more, so a node that joins late gets shards as the others give them back. A node that
dies stops refreshing its presence: within ``STALE_TICKS`` ticks its shards go to the
shared queue again, and the tasks left in its own queue expire as every shard task does
(two ticks). A live node keeps its claims while it steps any of its shards: one that
stepped none for ``CLAIM_TICKS`` ticks (held by a long task) loses them all. Affinity
only saves decoding; correctness never depends on it (every shard task still takes its
shard's fenced lease).

The whole tick (``REPLICATION_SHARDS`` 1: every set in one task) has an owner too,
field ``tick`` of the same hash: the node that ran it last, which keeps it while its
claim is fresh and its node alive, or while it runs one (field ``tick-running``):
``tick_route``, ``tick_started``, ``tick_done``. A tick that lands on another node is
forwarded there. On one machine that takes single-process nodes (``make run`` starts
two): a node's own pool hands tasks to its processes in turn, and at 10,000 partitions
a whole tick after a switch of process cost 1.7 s against 0.7 s. An owner busy with
another long task stops refreshing its claim, and within ``STALE_TICKS`` ticks the next
tick runs wherever it lands and claims it there.

Kept in Redis per store: ``shard-owners`` (shard or ``tick`` -> "queue ms") and
``shard-nodes`` (queue -> ms of its last presence).
"""
from __future__ import annotations

import math
from collections.abc import Mapping

from cluster.adapters.redis_keys import client, key

# A presence (or the whole tick's claim) older than this many ticks is a dead node's.
STALE_TICKS = 3
# A live node keeps its shards while it stepped any of them within this many ticks: the
# engine's periodic tasks (the reconcile, the healing check) hold a worker for seconds at
# a few hundred thousand partitions, and a shard moved meanwhile costs a whole decode
# where it lands, more than the ticks it misses where it is.
CLAIM_TICKS = 10
# The whole tick's fields in the owners hash (shard fields are digits): its owner, and
# the node running one now.
TICK_FIELD = "tick"
RUNNING_FIELD = "tick-running"


def owners_key() -> str:
    return key("shard-owners")


def nodes_key() -> str:
    return key("shard-nodes")


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def fresh(entries: Mapping[bytes | str, bytes | str], now_ms: int, tick_ms: int,
          horizon_ticks: int = STALE_TICKS) -> dict[str, tuple[str, int]]:
    """Decode ``shard -> "queue ms"`` claims, keeping every claim of a node that stepped
    any of its shards within ``horizon_ticks`` ticks.

    A node's progress, not each claim's age, decides: a node that owns several shards and
    works through a backlog of their tasks steps each of them less often than every few
    ticks. Were its claims lost one by one, the shards would go to nodes that must decode
    them, which then fall behind in turn (docs/engine-throughput.md, round 25). A node
    stuck in one long task steps none and loses them all."""
    claims: dict[str, tuple[str, int]] = {}
    progress: dict[str, int] = {}
    for field, value in entries.items():
        queue, _, ms = _text(value).rpartition(" ")
        if queue and ms.isdigit():
            claims[_text(field)] = (queue, int(ms))
            progress[queue] = max(progress.get(queue, 0), int(ms))
    return {shard: claim for shard, claim in claims.items()
            if now_ms - progress[claim[0]] <= horizon_ticks * tick_ms}


def claims_of_live_nodes(entries: Mapping[bytes | str, bytes | str], alive: set[str],
                         now_ms: int, tick_ms: int) -> dict[int, str]:
    """Shard -> queue of the claims a live node holds and keeps (``fresh`` over
    CLAIM_TICKS); a dead node's claims count for nothing, however recent."""
    return {int(s): queue for s, (queue, _) in fresh(entries, now_ms, tick_ms,
                                                      CLAIM_TICKS).items()
            if s.isdigit() and queue in alive}


def live_nodes(now_ms: int, tick_ms: int) -> set[str]:
    """The queues of the nodes whose presence is fresh."""
    return _alive(client().hgetall(nodes_key()), now_ms, tick_ms)


def _alive(nodes: Mapping[bytes | str, bytes | str], now_ms: int, tick_ms: int) -> set[str]:
    return {_text(queue) for queue, ms in nodes.items()
            if _text(ms).isdigit() and now_ms - int(_text(ms)) <= STALE_TICKS * tick_ms}


def routes(shards: int, now_ms: int, tick_ms: int) -> dict[int, str]:
    """The queue of each shard whose owner is fresh and alive (others: the shared queue)."""
    owners = claims_of_live_nodes(client().hgetall(owners_key()),
                                  live_nodes(now_ms, tick_ms), now_ms, tick_ms)
    return {s: queue for s, queue in owners.items() if s < shards}


def decide(shard: int, mine: str, owners: Mapping[int, str], nodes: int,
           shards: int) -> bool | None:
    """After ``mine`` stepped ``shard``: True to claim it, False to give it back, None to
    leave the claims as they are. ``owners``: the claims that count (shard -> queue:
    ``claims_of_live_nodes``)."""
    fair = math.ceil(shards / max(1, nodes))
    held = sum(1 for s, queue in owners.items() if queue == mine and s < shards)
    current = owners.get(shard)
    if current == mine:
        return held <= fair
    if current is None and held < fair:
        return True
    return None


def after_step(shard: int, mine: str, shards: int, now_ms: int, tick_ms: int) -> None:
    """Refresh, take or give back ``shard``'s claim after ``mine`` stepped it."""
    r = client()
    alive = live_nodes(now_ms, tick_ms) | {mine}
    owners = claims_of_live_nodes(r.hgetall(owners_key()), alive, now_ms, tick_ms)
    verdict = decide(shard, mine, owners, len(alive), shards)
    if verdict is True:
        r.hset(owners_key(), str(shard), f"{mine} {now_ms}")
    elif verdict is False:
        r.hdel(owners_key(), str(shard))


def tick_route(now_ms: int, tick_ms: int) -> str | None:
    """The queue of the node that ran the whole tick last, while its claim is fresh or it is
    running one (a tick at 100,000 partitions outlasts ``STALE_TICKS`` ticks) and its node
    is alive; None: whoever takes the tick runs it."""
    return tick_placement(now_ms, tick_ms)[0]


def tick_placement(now_ms: int, tick_ms: int) -> tuple[str | None, list[str]]:
    """The tick's owner (``tick_route``) and the queues of the other live nodes."""
    pipe = client().pipeline(transaction=False)
    pipe.hmget(owners_key(), [TICK_FIELD, RUNNING_FIELD])
    pipe.hgetall(nodes_key())
    (claim, running), nodes = pipe.execute()
    alive = _alive(nodes, now_ms, tick_ms)
    claimed = fresh({TICK_FIELD: claim}, now_ms, tick_ms).get(TICK_FIELD) if claim else None
    runner = _text(running).rpartition(" ")[0] if running else ""
    owner = claimed[0] if claimed is not None and claimed[0] in alive else (
        runner if runner in alive else None)
    return owner, sorted(alive - {owner})


def tick_started(mine: str, now_ms: int) -> None:
    """``mine`` is about to run the whole tick: ticks are forwarded to it meanwhile."""
    client().hset(owners_key(), RUNNING_FIELD, f"{mine} {now_ms}")


def tick_done(mine: str, now_ms: int, *, ran: bool) -> None:
    """``mine`` is done with the tick; ``ran``: it ran it (it owns the tick from now on),
    else it found the tick held elsewhere."""
    pipe = client().pipeline(transaction=False)
    if ran:
        pipe.hset(owners_key(), TICK_FIELD, f"{mine} {now_ms}")
    pipe.hget(owners_key(), RUNNING_FIELD)
    running = pipe.execute()[-1]
    if running is not None and _text(running).rpartition(" ")[0] == mine:
        # A race with another node's start costs one forwarded tick, nothing more.
        client().hdel(owners_key(), RUNNING_FIELD)
