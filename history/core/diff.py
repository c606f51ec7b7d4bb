"""Comparing two moments of history, and the counts the heatmaps draw for one moment."""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, NamedTuple

from history.core.replay import Moment
from cluster.core.replication.state import Key

FIELDS = ("leader", "lrs", "replicas")


class SpuCounts(NamedTuple):
    """What the rack x SPU heatmaps draw for one SPU."""
    leaders: int
    replicas: int
    preferred: int
    preferred_leading: int


def spu_counts(m: Moment) -> dict[int, SpuCounts]:
    leaders: Counter[int] = Counter()
    replicas: Counter[int] = Counter()
    preferred: Counter[int] = Counter()
    leading: Counter[int] = Counter()
    for s in m.statuses.values():
        replicas.update(s.replicas)
        if s.leader is not None:
            leaders[s.leader] += 1
        if s.replicas:
            preferred[s.replicas[0]] += 1
            if s.leader == s.replicas[0]:
                leading[s.leader] += 1
    spus = set(m.spus) | set(replicas)
    return {spu: SpuCounts(leaders[spu], replicas[spu], preferred[spu], leading[spu])
            for spu in sorted(spus)}


def topic_spu_counts(m: Moment) -> dict[tuple[str, int], int]:
    """Replicas per (topic, SPU)."""
    counts: Counter[tuple[str, int]] = Counter()
    for (topic, _), s in m.statuses.items():
        for spu in s.replicas:
            counts[(topic, spu)] += 1
    return dict(counts)


def changes(a: Moment, b: Moment) -> list[dict[str, Any]]:
    """Partitions whose leader, LRS or replicas differ, in (topic, partition) order."""
    out: list[dict[str, Any]] = []
    for key in sorted(a.statuses.keys() | b.statuses.keys()):
        old, new = a.statuses.get(key), b.statuses.get(key)
        if old == new:
            continue
        row: dict[str, Any] = {"topic": key[0], "partition": key[1]}
        if old is None or new is None:
            row["changed"] = ["created" if old is None else "dropped"]
        else:
            row["changed"] = [f for f in FIELDS if getattr(old, f) != getattr(new, f)]
            if not row["changed"]:
                continue  # resolution or epoch only: not what the comparison is about
        for name in FIELDS:
            row[name] = {"from": _plain(old, name), "to": _plain(new, name)}
        out.append(row)
    return out


def _plain(status: Any, name: str) -> Any:
    if status is None:
        return None
    value = getattr(status, name)
    return list(value) if isinstance(value, tuple) else value


def per_spu(a: Moment, b: Moment, racks: Mapping[int, str]) -> tuple[list[dict[str, Any]],
                                                                        list[dict[str, Any]]]:
    """Leaders and replicas each SPU and each rack held at both moments. An SPU counts
    in the rack it had at each moment (the log's racks; ``racks``, today's, where the
    log has none), so a moved SPU's "from" and "to" land in different racks."""
    ca, cb = spu_counts(a), spu_counts(b)
    rack_a, rack_b = {**racks, **a.racks}, {**racks, **b.racks}
    zero = SpuCounts(0, 0, 0, 0)
    spus = []
    rack_rows: dict[str, Counter[str]] = {}
    for spu in sorted(ca.keys() | cb.keys()):
        x, y = ca.get(spu, zero), cb.get(spu, zero)
        row = {"spu": spu, "rack": rack_b.get(spu, ""), "leaders_from": x.leaders,
               "leaders_to": y.leaders, "replicas_from": x.replicas, "replicas_to": y.replicas}
        spus.append(row)
        before = rack_rows.setdefault(rack_a.get(spu, ""), Counter())
        before.update(leaders_from=x.leaders, replicas_from=x.replicas,
                      leaders_to=0, replicas_to=0)
        after = rack_rows.setdefault(rack_b.get(spu, ""), Counter())
        after.update(leaders_to=y.leaders, replicas_to=y.replicas)
    keys = ("leaders_from", "leaders_to", "replicas_from", "replicas_to")
    return spus, [{"rack": rack, **{k: acc[k] for k in keys}}
                  for rack, acc in sorted(rack_rows.items())]


def diff(a: Moment, b: Moment, racks: Mapping[int, str]) -> dict[str, Any]:
    """What `history diff --json` and /api/history/diff/ answer (without the moments' stamps)."""
    rows = changes(a, b)
    spus, rack_rows = per_spu(a, b, racks)
    counts = {name: sum(1 for r in rows if name in r["changed"]) for name in FIELDS}
    counts["partitions"] = len(rows)
    return {"partitions": rows, "counts": counts, "spus": spus, "racks": rack_rows}


def moved_keys(a: Moment, b: Moment) -> list[Key]:
    return [(r["topic"], r["partition"]) for r in changes(a, b) if "leader" in r["changed"]]
