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

from django.conf import settings

from cluster.adapters import hot_state
from cluster.core import replication as core
from cluster.core.replication import Acks, Isolation, ProduceRequest, Resolution, intents
from cluster.core.replication.produce import readable_end
from cluster.core.replication.compaction import COMPACTED
from cluster.engine.engine import current as engine
from cluster.engine.unit import Unit
from cluster.errors import InvalidInput, NotFound, Unavailable
from cluster.adapters.hot_state import HotState
from cluster.metrics.hooks import count_produce
from cluster.models import Topic
from cluster.selectors.shapes import PartitionRow, partition_rows, row_from_summary
from cluster.services.events import record_intent
from cluster.adapters.scheduler import Dispatch
from cluster.services.waiting import wait_replicated, wait_until
from cluster.services.replication import followers_fetch
from cluster.adapters.redis_keys import bound_to_store
from cluster.engine.store_identity import check_hot_state_identity

PENDING = core.AckOutcome.PENDING.value

# Kafka's offsets are signed 64-bit: anything past this is not an offset.
MAX_OFFSET = 2**63 - 1


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
        return self.state in (core.AckOutcome.ACKNOWLEDGED.value, core.AckOutcome.APPENDED.value)

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
    # Its replica map is not needed here: decoding it cost 0.1 s per call at 50,000 partitions.
    row = Topic.objects.filter(name=topic).defer("replica_map", "manual_replica_map").first()
    if row is None:
        raise NotFound(f"topic {topic!r} not found", field="topic")
    if not 0 <= partition < row.partitions:
        raise InvalidInput(f"topic {topic!r} has partitions 0..{row.partitions - 1}, "
                           f"not {partition}", field="partition")
    return row


def records_produce(*, topic: str, partition: int = 0, acks: object = 1,
                    count: int | None = None, values: list[str] | None = None,
                    dispatch: Dispatch | None = None) -> ProduceOutcome:
    """Append on the leader. acks=all: the partition's followers fetch in the same unit of
    work, so an idle partition's write commits (and its ticket is decided) at once; one the
    LRS cannot take yet is decided by later ticks (``produce_and_wait``)."""
    level = parse_acks(acks)
    check_partition(topic, partition)
    n = len(values) if values is not None else count
    if not n or n < 1:
        raise InvalidInput("give --count N (N >= 1) or at least one --value", field="count")
    if n > settings.PRODUCE_MAX_RECORDS:
        raise InvalidInput(f"at most {settings.PRODUCE_MAX_RECORDS:,} records a request "
                           f"(PRODUCE_MAX_RECORDS), not {n:,}", field="count")
    outcome = ProduceOutcome(topic, partition, acks_label(level), "refused", n)
    # One unit of work: the append, its values and its ticket land in one fenced commit.
    with engine().unit(keys=[(topic, partition)], dispatch=dispatch, record_ids=n) as u:
        refusal = _refusal(u.state, topic, partition)
        if refusal:
            outcome.code, outcome.reason = refusal
        else:
            result = core.produce(u.state.state, ProduceRequest(topic, partition, level, n))
            _record(u, outcome, result, level, values)
            u.actions += result.actions
            if level is Acks.ALL and result.accepted:
                # Someone waits for the LRS: its followers fetch now, not at their shard's
                # next tick (seconds away on a large cluster); the ticket is decided with this
                # commit.
                u.actions += followers_fetch(u.state, [(topic, partition)], u.at)
    count_produce(outcome.state, outcome.acks, outcome.code, outcome.count,
                  namespace=u.state.namespace)
    return outcome


def _refusal(hot: HotState, topic: str, partition: int) -> tuple[str, str] | None:
    rs = hot.state.replica_sets.get((topic, partition))
    if rs is None:
        return (core.UNKNOWN_TOPIC_OR_PARTITION,
                f"{topic}/{partition} is not replicated yet (topic not provisioned?)")
    if rs.leader is not None and rs.leader in hot_state.killed():
        return core.NOT_LEADER, f"leader SPU {rs.leader} is not responding"
    return None


def _record(u: Unit, outcome: ProduceOutcome, result: core.ProduceResult, level: Acks,
            values: list[str] | None) -> None:
    """Note the write on ``outcome``; its values and ticket are staged with the unit's commit,
    so a refused commit leaves neither (nor any row: nothing is projected)."""
    if not result.accepted:
        outcome.code, outcome.reason = result.code, result.reason
        return
    base, first = result.base_offset, result.record_ids[0]
    outcome.base_offset, outcome.first_id = base, first
    if values is not None:
        u.stage(hot_state.values_ops(outcome.topic, dict(zip(result.record_ids, values))))
    outcome.state = core.outcome_on_append(level).value
    if level is Acks.ALL:
        u.stage(hot_state.ticket_ops(first, {
            "count": outcome.count, "state": outcome.state, "topic": outcome.topic,
            "partition": outcome.partition, "base_offset": base}, still_open=True))


def produce_outcome_refresh(outcome: ProduceOutcome) -> ProduceOutcome:
    """Fill a pending acks=all outcome from its ticket (the ack actions write it)."""
    if outcome.state != PENDING or outcome.first_id is None:
        return outcome
    ticket = hot_state.read_ticket(outcome.first_id)
    if ticket is None:
        return outcome
    state = _ticket_outcome(outcome.first_id, ticket)
    if state is not core.AckOutcome.PENDING:
        outcome.state = state.value
        outcome.code, outcome.reason = ticket.get("code"), ticket.get("reason")
    return outcome


def _ticket_outcome(first_id: int, ticket: hot_state.Ticket) -> core.AckOutcome:
    """The ticket's outcome, or acknowledged if its records are below the HW: a write
    committed after its ticket's update was lost in a crash still reads acknowledged."""
    current = core.AckOutcome(ticket["state"])
    if current is not core.AckOutcome.PENDING:
        return current
    return core.ack_outcome(current, count=ticket["count"], acked=ticket.get("acked", 0),
                            failed=False, committed=_committed(first_id, ticket))


def records_produce_and_wait(*, topic: str, partition: int = 0, acks: object = 1,
                             count: int | None = None, values: list[str] | None = None,
                             wait_s: float | None = None) -> ProduceOutcome:
    """The produce use case every shell calls (page, API, ``produce`` command).

    acks=0 and acks=1 answer once the leader appended. acks=all waits up to
    ``wait_s`` (default ``PRODUCE_WAIT_S``) until the whole LRS has the
    records or the write failed. Its append runs the partition's fetch round
    itself (``records_produce``), which commits an idle partition's write at
    once; otherwise, with a worker running it polls the hot state the worker's
    ticks advance, with none it steps the replication here. If the time runs
    out first, the outcome stays "pending" with a reason.
    """
    with engine().bound():  # the store's id read once, for the write and every poll after it
        wait_replicated(topic)
        outcome = records_produce(topic=topic, partition=partition, acks=acks, count=count,
                                  values=values)
        return produce_and_wait(outcome, timeout_s=wait_s)


def produce_and_wait(outcome: ProduceOutcome, *, timeout_s: float | None = None
                     ) -> ProduceOutcome:
    """Wait until an acks=all write is acknowledged or failed (the HW passed it, or not)."""
    # Most writes were decided in their own unit of work: no tick (wait_until's first move
    # when no worker runs) for those.
    if produce_outcome_refresh(outcome).state == PENDING:
        wait_until(lambda: produce_outcome_refresh(outcome).state != PENDING,
                   timeout_s=timeout_s if timeout_s is not None else settings.PRODUCE_WAIT_S)
    if outcome.state == PENDING:
        outcome.reason = "timed out waiting for the LRS to replicate the write"
    return outcome


def records_produce_outcome(*, outcome_id: int) -> dict[str, Any]:
    """What became of the acks=all write whose handle (its first record id) is ``outcome_id``."""
    ticket = hot_state.read_ticket(outcome_id)
    if ticket is None:
        raise NotFound(f"no write {outcome_id} (unknown, or older than an hour)", field="id")
    state = _ticket_outcome(outcome_id, ticket)
    acked = ticket["count"] if state is core.AckOutcome.ACKNOWLEDGED else ticket.get("acked", 0)
    return {"id": outcome_id, "state": state.value, "count": ticket["count"],
            "acked": acked, "code": ticket.get("code"),
            "reason": ticket.get("reason")}


def _committed(first_id: int, ticket: hot_state.Ticket) -> bool:
    """The HW passed the write's last record and it is still in place: acknowledged, even if
    whoever decided it died before updating the ticket (a Redis or worker crash)."""
    if "topic" not in ticket:
        return False
    key = (ticket["topic"], ticket["partition"])
    rs = hot_state.load([key]).state.replica_sets.get(key)
    last = ticket["base_offset"] + ticket["count"] - 1
    if rs is None or rs.leader is None or rs.hw <= last:
        return False
    leader = rs.replica[rs.leader]
    return last < leader.leo and leader.at(last) == first_id + ticket["count"] - 1


def records_consume(*, topic: str, partition: int = 0, offset: int = 0,
                    uncommitted: bool = False, max_records: int | None = None
                    ) -> list[dict[str, Any]]:
    """Read from the leader: committed records only unless ``uncommitted``.

    Reads the leader's retained log only, so a read costs the same at any offset.
    """
    check_partition(topic, partition)
    max_records = _checked_read(offset, max_records)
    # The store id the identity check read, bound for the reads after it (one store read).
    with bound_to_store(check_hot_state_identity()):
        log = _readable_leader_log(topic, partition)
        isolation = Isolation.UNCOMMITTED if uncommitted else Isolation.COMMITTED
        end = readable_end(log.hw, log.leo, offset, isolation, max_records)
        first = max(offset, log.log_start)
        return _with_values(topic, first, log.records(offset, end))


def _readable_leader_log(topic: str, partition: int) -> hot_state.LeaderLog:
    log = hot_state.read_leader_log((topic, partition))
    if log is None:
        raise Unavailable(f"{topic}/{partition} is not replicated yet", field="topic")
    if log.leader is not None and log.leader in hot_state.killed():
        raise Unavailable(f"{topic}/{partition}: the leader is not responding",
                          field="partition")
    if log.leader is None or log.resolution is not Resolution.ONLINE:
        raise Unavailable(f"{topic}/{partition} is {log.resolution.value}: no leader",
                          field="partition")
    return log


def _checked_read(offset: int, max_records: int | None) -> int:
    """The number of records to read; refuses offsets and counts out of range."""
    if not 0 <= offset <= MAX_OFFSET:
        raise InvalidInput(f"offset must be between 0 and {MAX_OFFSET:,}", field="offset")
    limit = settings.CONSUME_MAX_RECORDS
    if max_records is None:
        return limit
    if not 1 <= max_records <= limit:
        raise InvalidInput(f"max must be between 1 and {limit:,} records (CONSUME_MAX_RECORDS), "
                           f"not {max_records:,}", field="max")
    return max_records


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
        # The log first: the store's projection writes the row from the entry.
        record_intent(by, intents.topic_update(name, {"producer_rate": {
            "from": topic.producer_rate, "to": rate}}))
        topic.producer_rate = rate
    return topic


def replication_partition_list(topic: str | None = None) -> list[PartitionRow]:
    """`fluvio partition list` rows from the hot state; store rows for the rest."""
    with bound_to_store(check_hot_state_identity()):
        hot = hot_state.load() if hot_state.client().exists(hot_state.META) else None
    state = hot.state if hot else core.new_cluster([])
    rows = [row_from_summary(core.partition_summary(rs), core.waiting_for(rs, state.spus))
            for key, rs in sorted(state.replica_sets.items())
            if topic is None or key[0] == topic]
    seen = {(r["topic"], r["partition"]) for r in rows}
    rows += [r for r in partition_rows(topic) if (r["topic"], r["partition"]) not in seen]
    return sorted(rows, key=lambda r: (r["topic"], r["partition"]))
