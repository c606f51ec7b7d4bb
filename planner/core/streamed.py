"""Per-topic pieces of the pipeline for a layout no process holds whole.

``planner.plan`` reads the whole ``Cluster``. A streamed plan (the Spark job
in ``planner.spark.streamed``) keeps each topic on a worker and sends the
centre only what the cluster-wide steps need: each topic's shape, its
replicas per SPU and rack spread (for quotas and the lower bound), and its
leader classes (same replica set, same old leader -> how many partitions)
for the leader choice. Layout figures are summed from per-topic parts.
Every function here is the same arithmetic as its whole-layout counterpart
(``planner``, ``leaders``, ``metrics``); the tests hold them equal.
"""
from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass
from itertools import chain
from typing import Iterable, Mapping, NamedTuple, Sequence

from planner.core.metrics import _spread, rack_violations
from planner.core.model import ReplicaMap, Replicas, Spu, Topic, _check_topic
from planner.core.spread import Spread, map_spread

# (sorted replica set, old leader or None when it is not a replica, partitions)
LeaderClass = tuple[Replicas, "int | None", int]


class TopicShape(NamedTuple):
    """What ``apply_scenario`` reads of a topic: its name and replication."""

    name: str
    partitions: int
    replication: int


@dataclass(frozen=True)
class ShapeCluster:
    """A cluster known by its SPUs and topic shapes only (``apply_scenario``
    needs no replica map)."""

    spus: tuple[Spu, ...]
    topics: tuple[TopicShape, ...]


class TopicFacts(NamedTuple):
    """What the centre needs of one topic's current layout."""

    shape: TopicShape
    counts: dict[int, int]
    spread: Spread


def check_topic(topic: Topic, known: set[int]) -> None:
    """The checks ``Cluster`` makes of each topic (PlanError says why)."""
    _check_topic(topic, known)


def topic_facts(topic: Topic, group: Mapping[int, str]) -> TopicFacts:
    """``group``: SPU -> rack key of the current cluster (``group_key``)."""
    counts = dict(Counter(chain.from_iterable(topic.replicas)))
    shape = TopicShape(topic.name, topic.partitions, topic.replication)
    return TopicFacts(shape, counts, map_spread(topic.replicas, group))


def _class_key(reps: Replicas, old: int | None) -> tuple[frozenset[int], int | None]:
    return frozenset(reps), (old if old in reps else None)


def leader_classes(placed: Sequence[Replicas], old_leaders: Sequence[int | None]
                   ) -> list[LeaderClass]:
    """Interchangeable partitions of one topic (as ``leaders._classes``), in
    order of first appearance, each with its partition count."""
    index: dict[tuple, int] = {}
    classes: list[list] = []
    for reps, old in zip(placed, old_leaders):
        key = _class_key(reps, old)
        c = index.get(key)
        if c is None:
            index[key] = len(classes)
            classes.append([tuple(sorted(reps)), key[1], 0])
        classes[c if c is not None else -1][2] += 1
    return [(reps, old, n) for reps, old, n in classes]


def pack_classes(classes: Sequence[LeaderClass]) -> array:
    """Classes as one flat int array (``len, *replicas, has_old, old, n`` each):
    a few bytes per class to ship, against a tuple of tuples of ints."""
    flat = array("q")
    for reps, old, n in classes:
        flat.append(len(reps))
        flat.extend(reps)
        flat.extend((0, 0) if old is None else (1, old))
        flat.append(n)
    return flat


def unpack_classes(flat: Sequence[int], ids: Mapping[int, int]) -> list[LeaderClass]:
    """``pack_classes`` undone, each SPU id the one object ``ids`` maps it to
    (millions of classes then share a few thousand int objects)."""
    classes, i = [], 0
    while i < len(flat):
        size = flat[i]
        reps = tuple(map(ids.__getitem__, flat[i + 1:i + 1 + size]))
        i += 1 + size
        old = ids[flat[i + 1]] if flat[i] else None
        classes.append((reps, old, flat[i + 2]))
        i += 3
    return classes


def expand_classes(classes: Sequence[LeaderClass]) -> tuple[list[Replicas], list[int | None]]:
    """One entry per partition (the class's tuple shared, not copied), for
    ``leaders.choose_leaders``."""
    replicas: list[Replicas] = []
    olds: list[int | None] = []
    for reps, old, n in classes:
        replicas.extend([reps] * n)
        olds.extend([old] * n)
    return replicas, olds


def class_leaders(sizes: Sequence[int], leaders: Sequence[int]
                  ) -> list[tuple[tuple[int, int], ...]]:
    """Per class (``sizes``: each class's partition count), (SPU, partitions
    it leads) from the per-partition leaders of the ``expand_classes`` order."""
    result, start = [], 0
    for n in sizes:
        result.append(tuple(sorted(Counter(leaders[start:start + n]).items())))
        start += n
    return result


def apply_class_leaders(placed: Sequence[Replicas], old_leaders: Sequence[int | None],
                        classes: Sequence[LeaderClass],
                        chosen: Sequence[Sequence[tuple[int, int]]]) -> tuple[int, ...]:
    """Each partition's leader: its class's chosen leaders handed out in
    partition order (any split of a class costs the same)."""
    queues: dict[tuple, list[int]] = {}
    for (reps, old, _), split in zip(classes, chosen):
        queue = [spu for spu, n in split for _ in range(n)]
        queue.reverse()  # popped from the end
        queues[(frozenset(reps), old)] = queue
    return tuple(queues[_class_key(reps, old)].pop() for reps, old in zip(placed, old_leaders))


class LayoutPart(NamedTuple):
    """One topic's share of ``metrics.layout_metrics``: replicas and leaders
    per SPU (to be summed), its own spreads and rack violations, and the
    (leader, next in line) pairs (to be summed for the failover figure)."""

    replicas: dict[int, int]
    leaders: dict[int, int]
    topic_replica_spread: int
    topic_leader_spread: int
    rack_violations: int
    pairs: dict[tuple[int, int], int]


def layout_part(name: str, replica_map: ReplicaMap, ids: frozenset[int],
                rack_of: Mapping[int, str | None], leaders: Sequence[int] | None = None,
                counts: Mapping[int, int] | None = None) -> LayoutPart:
    """``ids``: the SPUs that may hold replicas; ``leaders``: the actual
    leaders where they are not the first replicas."""
    led = leaders if leaders is not None else [reps[0] for reps in replica_map]
    per_r = dict(counts) if counts is not None else dict(Counter(chain.from_iterable(replica_map)))
    per_l = dict(Counter(led))
    pairs = Counter(reps[:2] for reps in replica_map if len(reps) > 1)
    return LayoutPart(per_r, per_l, _spread(per_r, ids), _spread(per_l, ids),
                      rack_violations({name: replica_map}, rack_of), dict(pairs))


def failover_from(led_worst: Iterable[tuple[int, int]]) -> float:
    """``metrics.failover_concentration`` from, per leader, the partitions it
    leads that have a follower and the most of them behind one follower."""
    return max((worst / led for led, worst in led_worst if led), default=0.0)


def layout_figures(replicas: Mapping[int, int], leaders: Mapping[int, int], topic_replica: int,
                   topic_leader: int, violations: int, failover: float,
                   ids: frozenset[int]) -> dict[str, object]:
    """The ``layout_metrics`` keys from the summed parts."""
    return {"replica_spread": _spread(replicas, ids), "leader_spread": _spread(leaders, ids),
            "topic_replica_spread": topic_replica, "topic_leader_spread": topic_leader,
            "rack_violations": violations, "failover_concentration": failover}

