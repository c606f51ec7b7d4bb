"""Records: produce, consume, simulated producers and the partition list.

The core stores record ids; values live in Redis (``repl:values:<topic>``,
keyed by record id). A record produced without a value (``--count``, or the
simulated producers) reads back as ``record-<offset>``, so nothing is stored
for it. Offsets below the log start (retention, see core compaction) are gone
and skipped by readers.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from cluster import hot_state
from cluster.core import replication as core
from cluster.core.replication import Acks, Action, Isolation, ProduceRequest
from cluster.core.replication.compaction import COMPACTED
from cluster.errors import Conflict, InvalidInput, NotFound
from cluster.hot_state import HotState
from cluster.models import Partition, Topic
from cluster.selectors import partition_rows
from cluster.services.events import log_event
from cluster.services.replication import Dispatch, run_locked
from cluster.services.store_identity import ensure_hot_state_is_ours

SIMULATED_ACKS = Acks.LEADER
# A producer that was stopped (no worker) does not make up for lost time in one burst.
MAX_CATCH_UP_MS = 5000


@dataclass
class ProduceOutcome:
    """What a write got: ``state`` is acknowledged, appended (acks=0), pending, refused or failed."""
    topic: str
    partition: int
    acks: str
    state: str
    count: int
    base_offset: int | None = None
    first_id: int | None = None
    code: str | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.state in ("acknowledged", "appended")

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "first_id"}


def acks_label(acks: Acks) -> str:
    return "all" if acks is Acks.ALL else str(int(acks))


def parse_acks(value: object) -> Acks:
    try:
        return Acks.parse(value)  # type: ignore[arg-type]
    except (core.ReplicationError, ValueError):
        raise InvalidInput(f"acks must be 0, 1 or all, not {value!r}", field="acks") from None


def check_partition(topic: str, partition: int) -> Topic:
    row = Topic.objects.filter(name=topic).first()
    if row is None:
        raise NotFound(f"topic {topic!r} not found", field="topic")
    if not 0 <= partition < row.partitions:
        raise InvalidInput(f"topic {topic!r} has partitions 0..{row.partitions - 1}, "
                           f"not {partition}", field="partition")
    return row


def records_produce(*, topic: str, partition: int = 0, acks: object = 1,
                    count: int | None = None, values: list[str] | None = None,
                    dispatch: Dispatch | None = None) -> ProduceOutcome:
    """Append on the leader; acks=all is only settled later (see settle.produce_and_settle)."""
    level = parse_acks(acks)
    check_partition(topic, partition)
    n = len(values) if values is not None else count
    if not n or n < 1:
        raise InvalidInput("give --count N (N >= 1) or at least one --value", field="count")
    outcome = ProduceOutcome(topic, partition, acks_label(level), "refused", n)

    def step(hot: HotState) -> list[Action]:
        refusal = _refusal(hot, topic, partition)
        if refusal:
            outcome.code, outcome.reason = refusal
            return []
        result = core.produce(hot.state, ProduceRequest(topic, partition, level, n))
        _record(outcome, result, level, values)
        return list(result.actions)

    run_locked(step, keys=[(topic, partition)], dispatch=dispatch)
    return outcome


def _refusal(hot: HotState, topic: str, partition: int) -> tuple[str, str] | None:
    rs = hot.state.replica_sets.get((topic, partition))
    if rs is None:
        return (core.UNKNOWN_TOPIC_OR_PARTITION,
                f"{topic}/{partition} is not replicated yet (topic not provisioned?)")
    if rs.leader is not None and rs.leader in hot_state.killed():
        return core.NOT_LEADER, f"leader SPU {rs.leader} is not responding"
    return None


def _record(outcome: ProduceOutcome, result: core.ProduceResult, level: Acks,
            values: list[str] | None) -> None:
    if not result.accepted:
        outcome.code, outcome.reason = result.code, result.reason
        return
    outcome.base_offset, outcome.first_id = result.base_offset, result.record_ids[0]
    if values is not None:
        hot_state.store_values(outcome.topic, dict(zip(result.record_ids, values)))
    outcome.state = {Acks.NONE: "appended", Acks.LEADER: "acknowledged"}.get(level, "pending")
    if level is Acks.ALL:
        hot_state.write_ticket(outcome.first_id, {"count": outcome.count, "state": "pending"},
                               still_open=True)


def produce_outcome_refresh(outcome: ProduceOutcome) -> ProduceOutcome:
    """Fill a pending acks=all outcome from its ticket (the ack actions write it)."""
    if outcome.state != "pending" or outcome.first_id is None:
        return outcome
    ticket = hot_state.read_ticket(outcome.first_id) or {}
    if ticket.get("state") in ("acknowledged", "failed"):
        outcome.state = ticket["state"]
        outcome.code, outcome.reason = ticket.get("code"), ticket.get("reason")
    return outcome


def records_consume(*, topic: str, partition: int = 0, offset: int = 0,
                    uncommitted: bool = False, max_records: int | None = None
                    ) -> list[dict[str, Any]]:
    """Read from the leader: committed records only unless ``uncommitted``."""
    check_partition(topic, partition)
    if offset < 0:
        raise InvalidInput("offset must be >= 0", field="offset")
    ensure_hot_state_is_ours()
    hot = hot_state.load([(topic, partition)])
    if (topic, partition) not in hot.state.replica_sets:
        raise Conflict(f"{topic}/{partition} is not replicated yet", field="topic")
    if hot.state.replica_sets[(topic, partition)].leader in hot_state.killed():
        raise Conflict(f"{topic}/{partition}: the leader is not responding", field="partition")
    isolation = Isolation.UNCOMMITTED if uncommitted else Isolation.COMMITTED
    try:
        result = core.consume(hot.state, topic, partition, offset, isolation=isolation,
                              max_records=max_records)
    except core.NoLeader as exc:
        raise Conflict(str(exc), field="partition") from None
    return _with_values(topic, offset, list(result.records))


def _with_values(topic: str, offset: int, ids: list[int]) -> list[dict[str, Any]]:
    values = hot_state.read_values(topic, [i for i in ids if i != COMPACTED])
    return [{"offset": o, "value": values.get(rid, f"record-{o}")}
            for o, rid in enumerate(ids, start=offset) if rid != COMPACTED]


def topic_set_producer_rate(*, name: str, rate: float, by: Any = None) -> Topic:
    """Records per second the simulated producer appends to the topic (0 stops it)."""
    if not 0 <= rate <= 1_000_000:
        raise InvalidInput("producer rate must be between 0 and 1,000,000 records/s",
                           field="producer_rate")
    topic = Topic.objects.filter(name=name).first()
    if topic is None:
        raise NotFound(f"topic {name!r} not found", field="name")
    if topic.producer_rate != rate:
        Topic.objects.filter(pk=topic.pk).update(producer_rate=rate)
        log_event(by, "topic", name, "producer-rate", {"from": topic.producer_rate, "to": rate})
        topic.producer_rate = rate
    return topic


def simulate_producers(hot: HotState, at: int, stopped: set[int]) -> list[Action]:
    """Each topic with a producer rate appends what is due since its last run."""
    actions: list[Action] = []
    for name, table in hot.topics.items():
        rate = table.get("rate") or 0.0
        last = table.get("last_ms") or at
        due = table.get("carry", 0.0) + rate * min(at - last, MAX_CATCH_UP_MS) / 1000
        table["last_ms"], table["carry"] = (at, due - int(due)) if rate else (None, 0.0)
        if int(due):
            actions += _spread(hot, name, table, int(due), stopped)
    return actions


def _spread(hot: HotState, name: str, table: dict[str, Any], n: int,
            stopped: set[int]) -> list[Action]:
    """Round robin over partitions; a write to a leaderless partition is refused and lost."""
    parts = len(table["partitions"])
    start = table.get("next", 0)
    counts = [n // parts + (1 if (i - start) % parts < n % parts else 0) for i in range(parts)]
    table["next"] = (start + n) % parts
    actions: list[Action] = []
    for p, count in enumerate(counts):
        rs = hot.state.replica_sets.get((name, p))
        if count and rs is not None and rs.leader not in stopped:
            result = core.produce(hot.state, ProduceRequest(name, p, SIMULATED_ACKS, count))
            actions += [a for a in result.actions if not isinstance(a, core.ProduceAccepted)]
    return actions


def replication_partition_list(topic: str | None = None) -> list[dict[str, Any]]:
    """`fluvio partition list` rows from the hot state; store rows for the rest."""
    ensure_hot_state_is_ours()
    hot = hot_state.load() if hot_state.client().exists(hot_state.META) else None
    live = core.partition_list(hot.state, topic) if hot else []
    seen = {(r["topic"], r["partition"]) for r in live}
    rows: list[dict[str, Any]] = [dict(r) for r in live]
    stored = [r for r in partition_rows(topic) if (r["topic"], r["partition"]) not in seen]
    if stored:
        status = _stored_status(topic)
        rows += [{**r, "replica_status": status.get((r["topic"], r["partition"])) or
                  [{"spu": s, "leo": 0, "hw": 0} for s in r["replicas"]]} for r in stored]
    return sorted(rows, key=lambda r: (r["topic"], r["partition"]))


def _stored_status(topic: str | None) -> dict[tuple[str, int], list[dict[str, int]]]:
    query = Partition.objects.all() if topic is None else Partition.objects.filter(
        topic__name=topic)
    return {(t, i): s for t, i, s in query.values_list("topic__name", "index", "replica_status")}
