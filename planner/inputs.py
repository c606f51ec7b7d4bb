"""What plans start from: the cluster as the store has it (or a Kafka reassignment file
describes it), and a scenario typed by a person (SPUs to add or remove, factor changes)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from django.conf import settings

from cluster.core.replication.compaction import retention_for
from cluster.core.spus import MAX_SPU_ID
from cluster.core.topic_controller import TopicResolution
from cluster.errors import InvalidInput
from cluster.models import Partition as PartitionRow
from cluster.models import Spu as SpuRow
from cluster.models import Topic as TopicRow
from planner import core
from planner.running import executing, moves_of

MAX_LABEL = 200  # Plan.name's max_length


def cluster_from_store() -> core.Cluster:
    """SPUs and provisioned topics of the store, as the planner sees them:
    with each partition's actual leader and its size from the replication
    state (see ``partition_state``). A partition a plan is moving holds its old
    and its new replicas together until the move ends: it is planned from the
    move's target, where the cluster is going (a plan made so is applied once
    that move ended there: apply refuses a layout that drifted)."""
    spus = tuple(core.Spu(spu_id, rack or None)
                 for spu_id, rack in SpuRow.objects.order_by("id").values_list("id", "rack"))
    state, moving = partition_state(), moving_partitions()
    topics = tuple(_topic(pk, name, _targets(name, replica_map, moving), state.get(pk, {}))
                   for pk, name, replica_map in TopicRow.objects
                   .filter(resolution=TopicResolution.PROVISIONED.value)
                   .order_by("name").values_list("pk", "name", "replica_map") if replica_map)
    for topic in topics:
        _check_uniform(topic, moving)
    return _checked(lambda: core.Cluster(spus, topics))


class Moving(NamedTuple):
    plan: int
    before: list[int]
    after: list[int]
    added: list[int]


def moving_partitions() -> dict[tuple[str, int], Moving]:
    """(topic, partition) -> the move of a plan being carried out that is in flight there."""

    moving: dict[tuple[str, int], Moving] = {}
    for execution in executing():
        moves = moves_of(execution.plan_id)
        for index in execution.in_flight:
            m = moves[index]
            moving[(m.topic, m.partition)] = Moving(execution.plan_id, list(m.before),
                                                    list(m.after), list(m.added))
    return moving


def _targets(name: str, replica_map: list, moving: dict[tuple[str, int], Moving]) -> list:
    """The map with each partition under way (old and new replicas together, as the
    replication core holds them while a move runs) at its move's target."""
    if not moving:
        return replica_map
    out = []
    for index, replicas in enumerate(replica_map):
        m = moving.get((name, index))
        under_way = m is not None and list(replicas) == m.before + m.added
        out.append(m.after if m is not None and under_way else replicas)
    return out


def _check_uniform(topic: core.Topic, moving: dict[tuple[str, int], Moving]) -> None:
    """Name the partition whose replica count is not its topic's, and why if a move says."""
    counts = Counter(len(r) for r in topic.replicas)
    usual = counts.most_common(1)[0][0] if counts else 0
    for index, replicas in enumerate(topic.replicas):
        if len(replicas) == usual:
            continue
        m = moving.get((topic.name, index))
        why = (f"plan {m.plan}'s move to {m.after} is in flight there" if m is not None else
               "a move that ended short of its target may have left it so (see the events)")
        raise InvalidInput(
            f"topic {topic.name} partition {index} has {len(replicas)} replicas "
            f"{list(replicas)} where its other partitions have {usual}: {why}; every "
            "partition needs the same, non-zero replica count (move it to "
            f"{usual} replicas, then plan)", details={"topic": topic.name, "partition": index})


class PartitionState(NamedTuple):
    leader: int | None
    records: int


def partition_state() -> dict[int, dict[int, PartitionState]]:
    """Topic pk -> partition index -> actual leader and retained records.

    Retained records are the leader's LEO less what retention compacted away
    below HW (the replication shell keeps ``REPLICATION_LOG_RETENTION`` records
    under HW, fewer when the partitions together would pass
    ``REPLICATION_RETAINED_IDS``; 0 keeps everything)."""
    rows = list(PartitionRow.objects.values_list("topic_id", "index", "leader", "hw", "leo"))
    retain = retention_for(len(rows), settings.REPLICATION_LOG_RETENTION,
                           settings.REPLICATION_RETAINED_IDS)
    state: dict[int, dict[int, PartitionState]] = {}
    for topic, index, leader, hw, leo in rows:
        records = leo - max(0, hw - retain) if retain else leo
        state.setdefault(topic, {})[index] = PartitionState(leader, max(0, records))
    return state


def _topic(pk: int, name: str, replica_map: list, rows: dict[int, PartitionState]) -> core.Topic:
    replicas = tuple(tuple(r) for r in replica_map)
    if not rows:
        return core.Topic(name, replicas)
    known = [rows.get(p) for p in range(len(replicas))]
    per_record = settings.PLANNER_BYTES_PER_RECORD
    return core.Topic(name, replicas,
                      sizes=tuple(0 if row is None else row.records * per_record for row in known),
                      leaders=tuple(None if row is None else row.leader for row in known))


def cluster_from_kafka_json(document: str | dict) -> core.Cluster:
    """The layout of a Kafka reassignment file; its brokers must be registered SPUs."""
    store = cluster_from_store()
    layout = _checked(lambda: core.parse_kafka_reassignment(document, store.spus))
    unknown = sorted({s.id for s in layout.spus} - {s.id for s in store.spus})
    if unknown:
        raise InvalidInput(f"broker id{'s' if len(unknown) > 1 else ''} "
                           f"{', '.join(map(str, unknown))} in the file "
                           f"{'are' if len(unknown) > 1 else 'is'} not a registered SPU",
                           field="file", details={"unknown_spus": unknown})
    return layout


def scenario_from_input(*, add_spus: Sequence[str] = (), remove_spus: Sequence[int] = (),
                        lose_racks: Sequence[str] = (), replication: Sequence[str] = (),
                        name: str = "") -> core.Scenario:
    """Parse CLI/form spellings: ``ID:RACK`` additions, ``TOPIC:RF`` changes."""
    added = tuple(_added_spu(text) for text in add_spus)
    changes = tuple(_replication_change(text) for text in replication)
    label = name or _scenario_label(added, remove_spus, lose_racks, changes)
    return core.Scenario(label, added, tuple(remove_spus), tuple(lose_racks), changes)


def _added_spu(text: str) -> core.Spu:
    spu_id, _, rack = text.partition(":")
    if not spu_id.isdigit():
        raise InvalidInput(f"--add-spu {text!r} must be ID or ID:RACK", field="add_spu")
    if int(spu_id) > MAX_SPU_ID:
        raise InvalidInput(f"--add-spu {text[:40]!r}: SPU id must be between 0 and {MAX_SPU_ID}",
                           field="add_spu")
    return core.Spu(int(spu_id), rack or None)


def _replication_change(text: str) -> tuple[str, int]:
    topic, _, factor = text.rpartition(":")
    if not topic or not factor.isdigit() or int(factor) < 1:
        raise InvalidInput(f"replication change {text!r} must be TOPIC:FACTOR", field="replication")
    return topic, int(factor)


def _scenario_label(added: Sequence[core.Spu], removed: Sequence[int],
                    racks: Sequence[str], changes: Sequence[tuple[str, int]]) -> str:
    where = [f"{s.id}@{s.rack or '-'}" for s in added]
    parts = [f"add {', '.join(where)}" if added else "",
             f"remove {', '.join(map(str, removed))}" if removed else "",
             f"lose {', '.join(racks)}" if racks else "",
             ", ".join(f"{t} rf {rf}" for t, rf in changes)]
    label = "; ".join(p for p in parts if p) or "rebalance"
    # The plan's name column holds 200 characters: a long what-if is named by its start.
    return label if len(label) <= MAX_LABEL else label[:MAX_LABEL - 1] + "…"


def _checked(build):
    """A planner refusal (PlanError) as the InvalidInput every shell turns into a 400 / exit 2."""
    try:
        return build()
    except core.PlanError as exc:
        raise InvalidInput(str(exc), details={"planner": str(exc)}) from None
