"""Risk of a layout: for every rack and every SPU, what its failure would do.

For a failed SPU or rack F and each partition: ``leaders_lost`` (its leader is in F: an
election follows), ``offline`` (no replica outside F: nobody can lead) and
``below_min_lrs`` (fewer replicas outside F than the topic's min LRS /
min.insync.replicas: producers with acks=all are refused). Counted from the replica
lists alone, one pass over the partitions.
"""
from __future__ import annotations

from typing import Any

from collections import Counter
from collections.abc import Mapping, Sequence

from planner.core.model import ReplicaMap

KINDS = ("leaders_lost", "offline", "below_min_lrs")


def layout_risk(layout: Mapping[str, ReplicaMap], rack_of: Mapping[int, str | None],
                min_lrs: Mapping[str, int], leaders: Mapping[str, Sequence[int]] | None = None
                ) -> dict[str, Any]:
    spu: dict[str, Counter[int]] = {k: Counter() for k in KINDS}
    rack: dict[str, Counter[str | None]] = {k: Counter() for k in KINDS}
    for name, replica_map in layout.items():
        need = min_lrs.get(name, 1)
        led = leaders.get(name) if leaders else None
        for pid, reps in enumerate(replica_map):
            rf = len(reps)
            lead = led[pid] if led is not None else reps[0]
            spu["leaders_lost"][lead] += 1
            if rf - 1 < need:
                for s in reps:
                    spu["below_min_lrs"][s] += 1
            if rf == 1:
                spu["offline"][reps[0]] += 1
            here = Counter(rack_of.get(s) for s in reps if rack_of.get(s))
            if rack_of.get(lead):
                rack["leaders_lost"][rack_of[lead]] += 1
            for r, n in here.items():
                if rf - n < need:
                    rack["below_min_lrs"][r] += 1
                if n == rf:
                    rack["offline"][r] += 1
    racks = sorted({r for r in rack_of.values() if r})
    return {"spus": [{"spu": s, **{k: spu[k][s] for k in KINDS}} for s in sorted(rack_of)],
            "racks": [{"rack": r, **{k: rack[k][r] for k in KINDS}} for r in racks],
            "worst_spu": _worst(spu), "worst_rack": _worst(rack)}


def _worst(counts: Mapping[str, Counter]) -> dict[str, int]:
    return {k: max(counts[k].values(), default=0) for k in ("offline", "below_min_lrs")}


def risk_before_after(before: Mapping[str, ReplicaMap], after: Mapping[str, ReplicaMap],
                      rack_of: Mapping[int, str | None], min_lrs: Mapping[str, int],
                      leaders_before: Mapping[str, Sequence[int]] | None = None
                      ) -> dict[str, Any]:
    first = layout_risk(before, rack_of, min_lrs, leaders_before)
    second = layout_risk(after, rack_of, min_lrs)
    worse = [f"{scope} {k}: {first[scope][k]} -> {second[scope][k]}"
             for scope in ("worst_spu", "worst_rack") for k in ("offline", "below_min_lrs")
             if second[scope][k] > first[scope][k]]
    return {"before": first, "after": second, "worse": worse}
