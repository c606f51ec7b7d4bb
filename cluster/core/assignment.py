"""Computed replica assignment (CRA), as in the replica assignment spec (000).

Two algorithms share one idea: an index runs over the partitions and a
chained cluster keeps the index where the previous topic stopped, so that
leaders keep rotating across SPUs from topic to topic.

* Without racks: round robin with gaps.  Index ``i`` leads on the SPU at
  position ``i % n``; its followers follow after a gap that grows by one
  every full round over the SPUs and cycles with period ``n - rf + 1``.
* With racks: a rack matrix (racks sorted by size, largest first, ties by
  name), read diagonally into an SPU sequence, from which each partition
  reads ``rf`` consecutive SPUs.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ReplicaMap = list[list[int]]
"""Partition id (the list position) -> SPU ids, leader first."""


class AssignmentError(ValueError):
    """The SPUs at hand cannot carry the requested replication."""


def computed_replica_map(spu_ids: Sequence[int], partitions: int,
                         replication: int, start: int = 0) -> ReplicaMap:
    """Round-robin with gaps over ``spu_ids`` (sorted by id), as in 000."""
    spus = sorted(spu_ids)
    _check_capacity(len(spus), partitions, replication)
    return [_gapped_replicas(spus, start + p, replication)
            for p in range(partitions)]


def _gapped_replicas(spus: Sequence[int], index: int,
                     replication: int) -> list[int]:
    n = len(spus)
    leader = index % n
    gap = (index // n) % (n - replication + 1)
    followers = [(leader + 1 + gap + j) % n for j in range(replication - 1)]
    return [spus[leader]] + [spus[f] for f in followers]


def _check_capacity(spu_count: int, partitions: int, replication: int) -> None:
    if partitions < 1:
        raise AssignmentError("partitions must be at least 1")
    if replication < 1:
        raise AssignmentError("replication factor must be at least 1")
    if spu_count < replication:
        missing = replication - spu_count
        raise AssignmentError(
            f"need {missing} more SPU{'s' if missing > 1 else ''}: "
            f"replication factor {replication} but {spu_count} "
            f"SPU{'s' if spu_count != 1 else ''} registered")


@dataclass(frozen=True)
class RackRow:
    rack: str
    spus: tuple[int, ...]


def rack_matrix(spu_racks: Mapping[int, str]) -> list[RackRow]:
    """Stage 1: one row per rack, largest rack first, ties by rack name."""
    by_rack: dict[str, list[int]] = {}
    for spu_id, rack in spu_racks.items():
        by_rack.setdefault(rack, []).append(spu_id)
    rows = [RackRow(rack, tuple(sorted(ids))) for rack, ids in by_rack.items()]
    return sorted(rows, key=lambda row: (-len(row.spus), row.rack))


def spu_sequence(matrix: Sequence[RackRow]) -> list[int]:
    """Stage 2: read the matrix diagonally, skipping SPUs already taken.

    Step ``i`` reads row ``i % racks`` at column ``(i // racks + row)``;
    a short row wraps around its own SPUs, which is how 000 fills the
    gaps of unbalanced racks with a round robin.
    """
    racks = len(matrix)
    width = max((len(row.spus) for row in matrix), default=0)
    seen: set[int] = set()
    sequence: list[int] = []
    for i in range(racks * width):
        row = matrix[i % racks].spus
        spu = row[((i // racks) + (i % racks)) % width % len(row)]
        if spu not in seen:
            seen.add(spu)
            sequence.append(spu)
    return sequence


def rack_aware_replica_map(spu_racks: Mapping[int, str], partitions: int,
                           replication: int, start: int = 0) -> ReplicaMap:
    """Stage 3: each partition reads ``replication`` consecutive SPUs."""
    _check_capacity(len(spu_racks), partitions, replication)
    sequence = spu_sequence(rack_matrix(spu_racks))
    n = len(sequence)
    # The sequence repeated past its end, so each partition is one slice (C, not a loop).
    ring = sequence * (1 + -(-replication // n)) if n else sequence
    return [ring[i:i + replication] for i in ((start + p) % n for p in range(partitions))]


@dataclass(frozen=True)
class SpuPlacement:
    """An eligible SPU as assignment sees it: its id and optional rack."""
    id: int
    rack: str | None = None


def assign(spus: Sequence[SpuPlacement], partitions: int, replication: int,
           start: int = 0, ignore_racks: bool = False) -> ReplicaMap:
    """Pick the algorithm DESIGN.md prescribes for these SPUs and run it.

    Rack-aware when every SPU has a rack; plain when none has or when the
    topic ignores racks; an error when only some have one, because a
    silently rack-unaware map on a racked cluster defeats its purpose.
    """
    racked = [s for s in spus if s.rack]
    if ignore_racks or not racked:
        return computed_replica_map([s.id for s in spus], partitions,
                                    replication, start)
    if len(racked) != len(spus):
        bare = sorted(s.id for s in spus if not s.rack)
        raise AssignmentError(
            f"rack-aware assignment needs a rack on every SPU; SPU "
            f"{', '.join(map(str, bare))} ha{'ve' if len(bare) > 1 else 's'}"
            f" none (set racks or ignore rack assignment)")
    return rack_aware_replica_map({s.id: s.rack for s in spus}, partitions,
                                  replication, start)


def leader_follower_counts(replica_map: ReplicaMap,
                           group_of: Mapping[int, str] | None = None
                           ) -> dict[object, tuple[int, int]]:
    """(leaders, followers) per SPU, or per rack when ``group_of`` is given."""
    counts: dict[object, list[int]] = {}
    for replicas in replica_map:
        for position, spu in enumerate(replicas):
            key = group_of[spu] if group_of is not None else spu
            entry = counts.setdefault(key, [0, 0])
            entry[0 if position == 0 else 1] += 1
    return {key: (c[0], c[1]) for key, c in counts.items()}
