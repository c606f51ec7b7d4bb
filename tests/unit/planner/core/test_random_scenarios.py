"""Hundreds of random what-ifs on awkward clusters: every one gets a plan that
keeps the rack rule and the in-rack rule (issue 19).

Clusters have unequal racks, racks of one or two SPUs, SPUs without a rack,
and replication factors above the rack count; scenarios remove SPUs, lose a
rack, add an SPU and change replication factors, alone or together. The rack
rule is checked against its definition by brute force (no partition more
crowded in one rack than the racks' sizes force), not against the planner's
own formula.
"""
from __future__ import annotations

import random
from collections import Counter
from functools import lru_cache
from itertools import product
from typing import Sequence

from planner.core import Cluster, Options, Scenario, Spu, Topic, plan

CASES = 400


@lru_cache(maxsize=None)
def evenest(sizes: tuple[int, ...], rf: int) -> tuple[int, int]:
    """(Most replicas in one rack, racks spanned) of the evenest way to put
    ``rf`` replicas of a partition on racks of ``sizes`` SPUs."""
    spans = min(rf, len(sizes))
    ways = (n for n in product(*(range(min(size, rf) + 1) for size in sizes))
            if sum(n) == rf and sum(map(bool, n)) >= spans)
    return min(max(n) for n in ways), spans


def random_cluster(rng: random.Random, sizes: Sequence[int] = (1, 1, 2, 3, 4, 5),
                   partitions: tuple[int, int] = (1, 24)) -> tuple[Cluster, bool]:
    racks = [f"r{g}" for g in range(rng.randint(1, 4)) for _ in range(rng.choice(sizes))]
    racks += [None] * rng.choice([0, 0, 0, 1, 2])
    weighted = rng.random() < 0.15
    spus = tuple(Spu(i, rack, rng.choice([0.01, 0.5, 1.0, 2.0, 100.0]) if weighted else 1.0)
                 for i, rack in enumerate(racks))
    topics = []
    for k in range(rng.randint(1, 3)):
        rf = rng.randint(1, min(5, len(spus)))
        replicas = tuple(tuple(rng.sample(range(len(spus)), rf))
                         for _ in range(rng.randint(*partitions)))
        topics.append(Topic(f"t{k}", replicas))
    return Cluster(spus, tuple(topics)), weighted


def random_scenario(rng: random.Random, cluster: Cluster) -> Scenario:
    """A what-if that leaves enough SPUs for every replication factor."""
    ids = [s.id for s in cluster.spus]
    racks = sorted({s.rack for s in cluster.spus if s.rack is not None})
    kind = rng.choice(["as is", "remove", "lose", "add", "rf", "remove+rf"])
    remove: tuple[int, ...] = ()
    lose: tuple[str, ...] = ()
    add: tuple[Spu, ...] = ()
    if kind in ("remove", "remove+rf"):
        remove = tuple(rng.sample(ids, rng.randint(1, min(2, len(ids)))))
    elif kind == "lose" and racks:
        lose = (rng.choice(racks),)
    elif kind == "add":
        add = (Spu(len(ids), rng.choice([*racks, None])),)
    live = len(ids) + len(add) - len({s.id for s in cluster.spus
                                      if s.id in remove or s.rack in lose})
    changes: tuple[tuple[str, int], ...] = ()
    if kind in ("rf", "remove+rf"):
        changes = tuple((t.name, min(rng.randint(1, 5), live)) for t in cluster.topics
                        if rng.random() < 0.7)
    wanted = {t.name: t.replication for t in cluster.topics} | dict(changes)
    if live < 1 or max(wanted.values()) > live:
        return Scenario("as is")
    return Scenario(kind, add_spus=add, remove_spus=remove, lose_racks=lose, replication=changes)


def broken_rack_rule(result, spus: list[Spu]) -> list:
    key = {s.id: s.rack if s.rack is not None else f"~{s.id}" for s in spus}
    sizes = tuple(sorted(Counter(key.values()).values()))
    broken = []
    for name, replica_map in result.target.items():
        for reps in replica_map:
            most, spans = evenest(sizes, len(reps))
            in_rack = Counter(key[s] for s in reps)
            if max(in_rack.values()) > most or len(in_rack) < spans:
                broken.append((name, reps))
    return broken


def uneven_racks(counts: Counter, spus: list[Spu]) -> list:
    by_rack: dict[str, list[int]] = {}
    for spu in spus:
        if spu.rack is not None:
            by_rack.setdefault(spu.rack, []).append(counts[spu.id])
    return [(rack, held) for rack, held in by_rack.items() if max(held) - min(held) > 1]


def check_plan(case, cluster: Cluster, scenario: Scenario, options: Options,
               weighted: bool) -> None:
    result = plan(cluster, scenario, options)  # no exception, whatever the racks
    spus = [s for s in (*cluster.spus, *scenario.add_spus)
            if s.id not in scenario.remove_spus and s.rack not in scenario.lose_racks]
    live = {s.id for s in spus}
    rf = {t.name: t.replication for t in cluster.topics} | dict(scenario.replication)
    for name, replica_map in result.target.items():
        assert all(len(set(reps)) == len(reps) == rf[name] and set(reps) <= live
                   for reps in replica_map), (case, name)
    assert result.metrics["replicas_moved"] >= result.metrics["lower_bound"], case
    if options.anti_affinity:
        assert broken_rack_rule(result, spus) == [], case
        assert result.metrics["rack_violations"] == 0, case
    if not weighted:
        for name, replica_map in result.target.items():
            counts = Counter(s for reps in replica_map for s in reps)
            assert uneven_racks(counts, spus) == [], (case, name)
        overall = Counter(s for m in result.target.values() for reps in m for s in reps)
        assert uneven_racks(overall, spus) == [], case


def test_random_what_ifs_on_small_and_unequal_racks_all_plan_within_both_rules():
    rng = random.Random(19)
    rf_above_racks = small_racks = 0
    for case in range(CASES):
        cluster, weighted = random_cluster(rng)
        scenario = random_scenario(rng, cluster)
        options = Options(anti_affinity=rng.random() < 0.85, balance_leaders=rng.random() < 0.5)
        check_plan(case, cluster, scenario, options, weighted)
        racks = Counter(s.rack for s in cluster.spus if s.rack is not None)
        most = max(t.replication for t in cluster.topics)
        rf_above_racks += most > len(racks) >= 2
        small_racks += min(racks.values(), default=5) < most / max(1, len(racks))
    # The sample does reach the cases the issue is about.
    assert rf_above_racks >= 50 and small_racks >= 50


def test_random_what_ifs_with_a_hundred_partitions_a_topic_keep_both_rules():
    """Fewer, larger cases: longer chains of hand-overs are needed to keep
    the SPUs of a rack level."""
    rng = random.Random(20)
    for case in range(25):
        cluster, weighted = random_cluster(rng, sizes=(1, 2, 3, 5, 8), partitions=(40, 160))
        check_plan(case, cluster, random_scenario(rng, cluster), Options(), weighted)
