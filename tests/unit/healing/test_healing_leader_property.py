"""Property: a heal keeps a surviving original replica as the preferred leader.

Random clusters (4-14 SPUs, 1-4 racks, RF 1-4) lose 1-3 SPUs or a whole rack; every
move of the drain must keep the leader where it survives, and otherwise put first a
replica that was already there and is up, never the fresh copy (which would need an
extra election once it caught up) nor an SPU that is down.
"""
from __future__ import annotations

import random

import pytest

from healing.core import PartitionView, Snapshot, SpuView
from healing.core.fixes import drain_many


def random_failure(seed: int) -> tuple[Snapshot, list[int]]:
    rng = random.Random(seed)
    n = rng.randint(4, 14)
    racks = [f"r{i}" for i in range(rng.randint(1, 4))]
    rack = {s: rng.choice(racks) for s in range(n)}
    if rng.random() < 0.3:
        dead_rack = rng.choice(sorted(set(rack.values())))
        dead = sorted(s for s in rack if rack[s] == dead_rack)
    else:
        dead = sorted(rng.sample(range(n), rng.randint(1, 3)))
    alive = n - len(dead)
    rf = rng.randint(1, min(4, n))
    if alive < rf or not alive:
        dead = dead[:max(0, n - rf)] or dead[:1]
        alive = n - len(dead)
    rf = min(rf, alive)
    parts = []
    for topic in range(rng.randint(1, 3)):
        for pid in range(rng.randint(1, 30)):
            reps = tuple(rng.sample(range(n), rf))
            parts.append(PartitionView(f"t{topic}", pid, reps, reps, reps[0], rf))
    spus = tuple(SpuView(s, rack[s], s not in dead) for s in range(n))
    return Snapshot(spus, tuple(parts), 0), dead


def test_two_dead_spus_keep_the_surviving_replica_first():
    """The issue's case: SPUs {0, 1} dead, [0, 1, 2] heals with 2 still first."""
    spus = tuple(SpuView(s, None, s not in (0, 1)) for s in range(5))
    parts = (PartitionView("t", 0, (0, 1, 2), (0, 1, 2), 0, 3),
             PartitionView("t", 1, (1, 0, 3), (1, 0, 3), 1, 3),
             PartitionView("t", 2, (4, 1, 0), (4, 1, 0), 4, 3))
    moves = {m.partition: m for m in drain_many(Snapshot(spus, parts, 0), [0, 1])}
    assert moves[0].after[0] == 2
    assert moves[1].after[0] == 3
    assert moves[2].after[0] == 4 and not moves[2].leader_change


@pytest.mark.parametrize("seed", range(400))
def test_a_heal_keeps_a_surviving_original_replica_as_preferred_leader(seed):
    snapshot, dead = random_failure(seed)
    down = set(dead)
    moves = drain_many(snapshot, dead)
    touched = {(p.topic, p.partition) for p in snapshot.partitions if down & set(p.replicas)}
    assert {(m.topic, m.partition) for m in moves} == touched  # one move per partition
    for m in moves:
        assert set(m.removed) == down & set(m.before)  # only the dead replicas move
        assert not down & set(m.after) and len(m.after) == len(m.before)
        survivors = [s for s in m.before if s not in down]
        if m.before[0] not in down:
            assert m.after[0] == m.before[0] and not m.leader_change
        elif survivors:
            assert m.after[0] in survivors, (m.before, m.after, dead)
