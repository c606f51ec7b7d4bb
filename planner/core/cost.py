"""What a plan costs before anything moves: bytes and moves per SPU, the bottleneck, the
time under the throttles, an order that never overfills a disk, and a lower bound.

A new replica is copied from the partition's leader (Kafka's followers fetch from the
leader), so ``bytes_out`` is what an SPU sends as a leader of moving partitions and
``bytes_in`` what it receives as a new replica; ``moves_in`` / ``moves_out`` count
replicas arriving and leaving. Kafka's throttles (``leader.`` / ``follower.replication.
throttled.rate``) cap each broker's sending and receiving, so an SPU needs
``max(bytes_in, bytes_out) / rate`` seconds; with at most ``N`` moves per SPU at a time,
each round also costs ``MOVE_ROUND_S`` (a reassignment's metadata round trip).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import ceil

from planner.core.model import Move, Topic

MOVE_ROUND_S = 1.0
# Rates the ETA table shows beside the chosen throttle: how the time changes with it.
ETA_RATES = (10 * 2 ** 20, 50 * 2 ** 20, 100 * 2 ** 20, 500 * 2 ** 20)


def sizes_of(topics: Sequence[Topic]) -> dict[str, tuple[int, ...]]:
    return {t.name: t.sizes or (0,) * t.partitions for t in topics}


def per_spu(moves: Sequence[Move], sizes: Mapping[str, Sequence[int]],
            leaders: Mapping[str, Sequence[int]]) -> list[dict[str, int]]:
    rows: dict[int, dict[str, int]] = {}

    def row(spu: int) -> dict[str, int]:
        return rows.setdefault(spu, {"spu": spu, "bytes_in": 0, "bytes_out": 0,
                                     "moves_in": 0, "moves_out": 0})
    for move in moves:
        if not move.added:
            continue
        size = sizes[move.topic][move.partition]
        led = leaders.get(move.topic)
        source = led[move.partition] if led is not None else move.before[0]
        for spu in move.added:
            row(spu)["bytes_in"] += size
            row(spu)["moves_in"] += 1
            row(source)["bytes_out"] += size
        for spu in move.removed:
            row(spu)["moves_out"] += 1
    return [rows[s] for s in sorted(rows)]


def spu_seconds(row: Mapping[str, int], rate: float | None, per_spu_moves: int | None) -> float:
    seconds = max(row["bytes_in"], row["bytes_out"]) / rate if rate else 0.0
    if per_spu_moves:
        seconds += ceil(max(row["moves_in"], row["moves_out"]) / per_spu_moves) * MOVE_ROUND_S
    return seconds


def cost_summary(moves: Sequence[Move], topics: Sequence[Topic],
                 leaders: Mapping[str, Sequence[int]], rate: float | None,
                 per_spu_moves: int | None) -> dict[str, object]:
    sizes = sizes_of(topics)
    rows = per_spu(moves, sizes, leaders)
    bottleneck = max(rows, key=lambda r: (spu_seconds(r, rate or 1.0, per_spu_moves),
                                          r["moves_in"] + r["moves_out"], -r["spu"]),
                     default=None)
    eta = None
    if rate or per_spu_moves:
        eta = round(max((spu_seconds(r, rate, per_spu_moves) for r in rows), default=0.0), 1)
    return {"bytes_moved": sum(r["bytes_in"] for r in rows), "per_spu": rows,
            "bottleneck_spu": None if bottleneck is None else bottleneck["spu"],
            "eta_s": eta, "throttle_bytes_per_s": rate, "max_moves_per_spu": per_spu_moves,
            "eta_by_throttle": [{"bytes_per_s": r, "eta_s": round(max(
                (spu_seconds(row, r, per_spu_moves) for row in rows), default=0.0), 1)}
                for r in ETA_RATES]}


def execution_order(moves: Sequence[Move], sizes: Mapping[str, Sequence[int]],
                    loads: Mapping[int, int], limits: Mapping[int, float]) -> list[int] | None:
    """Indexes of ``moves`` in an order where no SPU passes its limit mid-way: a move's new
    replicas are full copies before its old ones are deleted. None when no such greedy
    order exists (the plan would have to pass a limit)."""
    load = dict(loads)
    pending = list(range(len(moves)))
    order: list[int] = []
    while pending:
        left = []
        for i in pending:
            move = moves[i]
            size = sizes[move.topic][move.partition]
            if all(load.get(s, 0) + size <= limits.get(s, float("inf")) for s in move.added):
                for s in move.added:
                    load[s] = load.get(s, 0) + size
                for s in move.removed:
                    load[s] -= size
                order.append(i)
            else:
                left.append(i)
        if len(left) == len(pending):
            return None
        pending = left
    return order


def bytes_lower_bound(loads: Mapping[int, int], ceiling: Mapping[int, float]) -> int:
    """Bytes any plan must move to bring every SPU to at most its ``ceiling`` (0 for a
    removed SPU): what stands above it has to leave, and every byte that leaves is copied."""
    return int(sum(max(0.0, load - ceiling.get(s, 0.0)) for s, load in loads.items()))
