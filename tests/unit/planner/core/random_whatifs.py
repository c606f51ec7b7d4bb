"""Seeded random what-ifs of issue 37's shapes, planned through the command's own path.

4-60 SPUs in 1-6 unequal racks, 1-20 topics of 1-500 partitions with RF 1-5 laid
out as Kafka's rack-aware assignment would; the what-if adds SPUs, removes SPUs,
does both, or loses a rack. ``run_case`` does what ``plan rebalance --from-kafka-json
FILE --json`` does past its store checks: parse the reassignment JSON, plan, and
serialise the plan document.
"""
from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from planner import core
from planner.core.baseline import assign_rack_aware

KINDS = ("add", "remove", "add+remove", "rack loss")


@dataclass(frozen=True)
class WhatIf:
    seed: int
    spus: tuple[core.Spu, ...]
    document: str  # the Kafka reassignment JSON the command reads
    scenario: core.Scenario
    partitions: int


def rack_sizes(rng: random.Random, spus: int, racks: int) -> list[int]:
    """``spus`` split into ``racks`` unequal racks (each at least one SPU)."""
    cuts = sorted(rng.sample(range(1, spus), racks - 1)) if racks > 1 else []
    edges = [0, *cuts, spus]
    return [b - a for a, b in pairwise(edges)]


def random_whatif(seed: int, max_partitions: int = 500, max_topics: int = 20,
                  max_spus: int = 60) -> WhatIf:
    rng = random.Random(seed)
    while True:
        n = rng.randint(4, max_spus)
        sizes = rack_sizes(rng, n, rng.randint(1, min(6, n)))
        spus = tuple(core.Spu(i, f"rack-{g}") for g, size in enumerate(sizes)
                     for i in [sum(sizes[:g]) + k for k in range(size)])
        kind = rng.choice(KINDS)
        add: tuple[core.Spu, ...] = ()
        remove: tuple[int, ...] = ()
        lose: tuple[str, ...] = ()
        if "add" in kind:
            racks = [f"rack-{g}" for g in range(len(sizes))] + [f"rack-{len(sizes)}"]
            add = tuple(core.Spu(n + k, rng.choice(racks)) for k in range(rng.randint(1, 4)))
        if "remove" in kind:
            remove = tuple(sorted(rng.sample(range(n), rng.randint(1, min(3, n - 1)))))
        if kind == "rack loss":
            if len(sizes) < 2:
                continue
            lose = (f"rack-{rng.randrange(len(sizes))}",)
        live = n + len(add) - len(remove) - sum(s.rack in lose for s in spus)
        rf_most = min(5, n, live)
        if rf_most < 1:
            continue
        entries = []
        total = 0
        for k in range(rng.randint(1, max_topics)):
            rf, count = rng.randint(1, rf_most), rng.randint(1, max_partitions)
            layout = assign_rack_aware(spus, count, rf, rng)
            entries += [{"topic": f"topic-{k:02d}", "partition": p, "replicas": list(r)}
                        for p, r in enumerate(layout)]
            total += count
        scenario = core.Scenario(kind, add_spus=add, remove_spus=remove, lose_racks=lose)
        return WhatIf(seed, spus, json.dumps({"version": 1, "partitions": entries}), scenario,
                      total)


def run_case(case: WhatIf) -> tuple[core.Plan, dict[str, Any], float]:
    """The plan, its ``--json`` document and the seconds it took."""
    started = time.perf_counter()
    cluster = core.parse_kafka_reassignment(case.document, case.spus)
    result = core.plan(cluster, case.scenario, core.Options())
    document = json.loads(json.dumps(core.plan_to_dict(result)))
    return result, document, time.perf_counter() - started
