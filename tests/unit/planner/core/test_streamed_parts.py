"""Per-topic pieces of the streamed plan equal their whole-layout counterparts."""
from __future__ import annotations

import random
from collections import Counter

from planner.core.leaders import choose_leaders
from planner.core.metrics import failover_concentration, layout_metrics
from planner.core.model import Spu
from planner.core.streamed import (apply_class_leaders, class_leaders, expand_classes,
                                   failover_from, layout_figures, layout_part, leader_classes,
                                   pack_classes, unpack_classes)


def random_layout(seed: int) -> tuple[tuple[Spu, ...], dict[str, tuple]]:
    rng = random.Random(seed)
    spus = tuple(Spu(i, f"r{i % 4}" if i % 7 else None) for i in range(14))
    layout = {f"t{k}": tuple(tuple(rng.sample(range(12), 3)) for _ in range(rng.randrange(1, 30)))
              for k in range(9)}
    return spus, layout


def test_summed_topic_parts_give_the_whole_layout_figures():
    for seed in range(5):
        spus, layout = random_layout(seed)
        ids, racks = frozenset(s.id for s in spus), {s.id: s.rack for s in spus}
        leaders = {n: tuple(reps[i % 3] for i, reps in enumerate(m)) for n, m in layout.items()}
        parts = [layout_part(n, m, ids, racks, leaders[n]) for n, m in layout.items()]
        replicas, led, pairs = Counter(), Counter(), Counter()
        for part in parts:
            replicas.update(part.replicas)
            led.update(part.leaders)
            pairs.update(part.pairs)
        per_leader: dict[int, list[int]] = {}
        for (leader, _), n in pairs.items():
            per_leader.setdefault(leader, []).append(n)
        failover = failover_from((sum(v), max(v)) for v in per_leader.values())
        figures = layout_figures(replicas, led, max(p.topic_replica_spread for p in parts),
                                 max(p.topic_leader_spread for p in parts),
                                 sum(p.rack_violations for p in parts), failover, ids)
        assert figures == layout_metrics(layout, spus, leaders)
        assert failover == failover_concentration(layout) > 0


def test_leaders_chosen_over_classes_are_as_balanced_as_over_partitions():
    spus, layout = random_layout(7)
    # Few distinct replica sets, so classes hold many partitions.
    layout = {n: tuple(m[i % min(3, len(m))] for i in range(len(m) * 4)) for n, m in layout.items()}
    names = sorted(layout)
    olds = {n: tuple(reps[1] for reps in layout[n]) for n in names}
    weights = {s.id: 1.0 for s in spus if s.id < 12}
    direct = choose_leaders([layout[n] for n in names], [olds[n] for n in names],
                            [{}] * len(names), [3] * len(names), True, weights)
    ids = {i: i for i in range(14)}
    classes = {n: unpack_classes(pack_classes(leader_classes(layout[n], olds[n])), ids)
               for n in names}
    assert classes == {n: leader_classes(layout[n], olds[n]) for n in names}
    assert sum(len(c) for c in classes.values()) < sum(map(len, layout.values())) / 3
    expanded = [expand_classes(classes[n]) for n in names]
    chosen = choose_leaders([e[0] for e in expanded], [e[1] for e in expanded],
                            [{}] * len(names), [3] * len(names), True, weights)
    led_direct, led_classes, kept_direct, kept_classes = Counter(), Counter(), 0, 0
    for n, by_partition, by_class in zip(names, direct, chosen):
        split = class_leaders([c for _, _, c in classes[n]], by_class)
        assert [sum(k for _, k in s) for s in split] == [c for _, _, c in classes[n]]
        leaders = apply_class_leaders(layout[n], olds[n], classes[n], split)
        assert all(lead in reps for lead, reps in zip(leaders, layout[n]))
        assert Counter(leaders) == Counter(by_class)
        led_direct.update(by_partition)
        led_classes.update(leaders)
        kept_direct += sum(map(int.__eq__, by_partition, olds[n]))
        kept_classes += sum(map(int.__eq__, leaders, olds[n]))
    # Only who leads within a class may differ: not the balance nor the leaders kept.
    assert max(led_classes.values()) - min(led_classes.values()) == \
        max(led_direct.values()) - min(led_direct.values())
    assert kept_classes == kept_direct
