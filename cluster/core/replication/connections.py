"""Leader/follower connections, shared per SPU pair as in 001.

A follower SPU opens one connection to each SPU that leads any of its
replicas; every replica set between the two reuses it. So an SPU pair has at
most two: one per direction (A's followers -> B's leaders, and back).
"""
from __future__ import annotations

from .state import ClusterState


def connect(state: ClusterState, follower_spu: int, leader_spu: int) -> None:
    state.connections.add((follower_spu, leader_spu))


def drop_connections(state: ClusterState, spu: int) -> None:
    state.connections = {c for c in state.connections if spu not in c}


def connection_counts(state: ClusterState) -> dict[tuple[int, int], int]:
    """Open connections per unordered SPU pair, keyed (lower id, higher id)."""
    counts: dict[tuple[int, int], int] = {}
    for a, b in state.connections:
        pair = (a, b) if a < b else (b, a)
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def connection_count(state: ClusterState, spu_a: int, spu_b: int) -> int:
    return ((spu_a, spu_b) in state.connections) + ((spu_b, spu_a) in state.connections)
