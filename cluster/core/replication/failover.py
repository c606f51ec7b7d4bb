"""Failover: who takes over a partition's leadership when its leader is lost."""
from __future__ import annotations


def successor(replicas: list[int], lrs: list[int], failed: int) -> int | None:
    """Who leads if ``failed`` goes down: the next LRS member in replica order (001).

    001 picks the LRS follower with the smallest lag; the store keeps no
    per-follower lag, so replica order breaks the tie as the leader order does.
    """
    for spu_id in replicas:
        if spu_id != failed and spu_id in lrs:
            return spu_id
    return None
