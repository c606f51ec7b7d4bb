"""The detectors' counts kept up to date from the partitions that moved
(healing/core/detect.py, ``tally_moved``) are the counts made afresh over every partition,
and the detection from them is the detection from the snapshot alone; the LRS members that
left and joined, found from the moved partitions (``lrs_changed``), are those a comparison
of every pair finds."""
from __future__ import annotations

import random

import pytest

from healing.core import (PartitionView, Settings, Snapshot, SpuView, detect, in_lrs,
                          in_lrs_moved, lrs_changed, tally, tally_basis, tally_moved)


def spus(rng: random.Random) -> tuple[SpuView, ...]:
    racked = rng.random() < 0.7  # else one SPU lacks a rack: racks are not kept apart
    return tuple(SpuView(i, (f"r{i % 3}" if racked or i else None), rng.random() < 0.8,
                         rng.random() < 0.85) for i in range(7))


def view(rng: random.Random, topic: str, partition: int) -> PartitionView:
    factor = rng.randint(1, 3)
    replicas = tuple(rng.sample(range(7), rng.randint(0, factor + 1)))
    lrs = tuple(r for r in replicas if rng.random() < 0.7)
    return PartitionView(topic, partition, replicas, lrs,
                         lrs[0] if lrs else None, factor, rng.random() < 0.8)


@pytest.mark.parametrize("seed", range(40))
def test_counts_kept_up_to_date_are_the_counts_made_afresh(seed):
    rng = random.Random(seed)
    cluster = spus(rng)
    partitions = [view(rng, f"t{i % 3}", i) for i in range(60)]
    counts, members = tally(partitions, cluster), in_lrs(Snapshot(cluster, tuple(partitions), 0))
    for _ in range(5):
        moved = []
        for position in rng.sample(range(len(partitions)), rng.randint(1, 12)):
            before = partitions[position]
            partitions[position] = view(rng, before.topic, before.partition)
            moved.append((before, partitions[position]))
        counts = tally_moved(counts, cluster, moved)
        seen, members = members, in_lrs_moved(members, moved)
        snapshot = Snapshot(cluster, tuple(partitions), 0)
        assert counts == tally(partitions, cluster)
        assert members == in_lrs(snapshot)
        # The members that left and joined, from the moved partitions alone.
        assert lrs_changed(moved) == (seen - members, members - seen)
        settings = Settings()
        assert detect(snapshot, settings, (), counts) == detect(snapshot, settings)


def test_a_partition_moved_twice_counts_as_it_is_now():
    cluster = (SpuView(0, "a", True), SpuView(1, "b", True), SpuView(2, "c", True))
    first = PartitionView("t", 0, (0, 1), (0, 1), 0, 2)
    second = PartitionView("t", 0, (1, 2), (1,), 1, 2)
    third = PartitionView("t", 0, (2, 0), (2, 0), 2, 2)
    counts = tally_moved(tally([first], cluster), cluster, [(first, second), (second, third)])
    assert counts == tally([third], cluster)
    members = in_lrs_moved(in_lrs(Snapshot(cluster, (first,), 0)),
                           [(first, second), (second, third)])
    assert members == {("t", 0, 2), ("t", 0, 0)}
    # SPU 0 left and came back: neither left nor joined.
    assert lrs_changed([(first, second), (second, third)]) == (
        {("t", 0, 1)}, {("t", 0, 2)})


def test_an_spu_down_in_a_rack_still_up_leaves_the_counts_basis_as_it_was():
    up = (SpuView(0, "a", True), SpuView(1, "a", True), SpuView(2, "b", True))
    one_down = (SpuView(0, "a", True), SpuView(1, "a", False), SpuView(2, "b", True))
    rack_down = (SpuView(0, "a", True), SpuView(1, "a", True), SpuView(2, "b", False))
    assert tally_basis(up) == tally_basis(one_down) != tally_basis(rack_down)
    partitions = [PartitionView("t", p, (p % 3, (p + 1) % 3), (p % 3,), p % 3, 2)
                  for p in range(9)]
    assert tally(partitions, up) == tally(partitions, one_down)
    assert tally(partitions, up) != tally(partitions, rack_down)  # spread over racks up
