"""Manual replica assignment (MRA): the replica assignment file of 000.

Two shapes are accepted, as Fluvio has used both: the object
``{"partitions": [{"id": 0, "replicas": [0, 1, 2]}]}`` and the bare array
``[{"id": 0, "replicas": [0, 1, 2]}]``.  Validation collects every problem
so an operator can fix a file in one pass; each problem names the
partition and the rule it breaks.
"""
from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass

from cluster.core.assignment import ReplicaMap

MAX_FILE_BYTES = 1024 * 1024
TOO_DEEP = "not a replica assignment: JSON nested too deeply to read"


@dataclass(frozen=True)
class MapProblem:
    partition: int | None
    rule: str
    message: str

    def __str__(self) -> str:
        where = "file" if self.partition is None else f"partition {self.partition}"
        return f"{where}: {self.message}"

    def as_dict(self) -> dict[str, object]:
        return {"partition": self.partition, "rule": self.rule,
                "message": str(self)}


class InvalidReplicaMap(ValueError):
    def __init__(self, problems: list[MapProblem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def decode_assignment_file(text: str | bytes) -> object:
    """The JSON value of a file, refusing oversized or non-JSON content."""
    if len(text) > MAX_FILE_BYTES:
        raise InvalidReplicaMap([MapProblem(None, "size",
                                            "file is larger than 1 MiB")])
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidReplicaMap([MapProblem(None, "json",
                                            f"not valid JSON ({exc})")]) from exc
    except RecursionError:
        raise InvalidReplicaMap([MapProblem(None, "json", TOO_DEEP)]) from None
    return data


def parse_assignment(data: object) -> ReplicaMap:
    """Turn either file shape into a replica map, enforcing the rules of 000."""
    entries = _entries(data)
    problems: list[MapProblem] = []
    replica_map: ReplicaMap = []
    first_seen: dict[int, int] = {}
    for position, entry in enumerate(entries):
        replicas = _check_entry(position, entry, problems, first_seen)
        replica_map.append(replicas)
    problems += _cross_entry_problems(replica_map)
    if problems:
        raise InvalidReplicaMap(problems)
    return replica_map


def _entries(data: object) -> list[object]:
    if isinstance(data, dict):
        if set(data) != {"partitions"}:
            raise InvalidReplicaMap([MapProblem(
                None, "shape", 'expected {"partitions": [...]} or a bare array '
                '[{"id": .., "replicas": [..]}]')])
        data = data["partitions"]
    if not isinstance(data, list):
        raise InvalidReplicaMap([MapProblem(
            None, "shape", "partitions must be a JSON array")])
    if not data:
        raise InvalidReplicaMap([MapProblem(
            None, "empty", "the map must have at least one partition")])
    return data


ENTRY_KEYS = ("id", "replicas")


def _check_entry(position: int, entry: object, problems: list[MapProblem],
                 first_seen: dict[int, int]) -> list[int]:
    if not isinstance(entry, dict) or "id" not in entry or "replicas" not in entry:
        problems.append(MapProblem(position, "shape",
                                   'each entry needs "id" and "replicas"'))
        return []
    problems += _unknown_keys(position, entry)
    _check_id(position, entry["id"], problems, first_seen)
    return _check_replicas(position, entry["replicas"], problems)


def _unknown_keys(position: int, entry: dict) -> list[MapProblem]:
    return [MapProblem(position, "unknown-key",
                       f'unknown key "{key}": an entry has only "id" and "replicas"')
            for key in entry if key not in ENTRY_KEYS]


def _check_id(position: int, pid: object, problems: list[MapProblem],
              first_seen: dict[int, int]) -> None:
    if _is_int(pid) and pid in first_seen:
        problems.append(MapProblem(position, "duplicate-id",
                                   f"id {pid} is a duplicate: entry {first_seen[pid]} "
                                   f"has it too (entry {position})"))
    elif not _is_int(pid) or pid != position:
        problems.append(MapProblem(
            position, "id-sequence",
            f"ids must start with 0 and be in sequence without gaps "
            f"(expected id {position}, found {describe_value(pid)})"))
    if _is_int(pid):
        first_seen.setdefault(pid, position)


def _check_replicas(position: int, replicas: object, problems: list[MapProblem]) -> list[int]:
    if not isinstance(replicas, list) or not replicas:
        problems.append(MapProblem(position, "at-least-one",
                                   "replicas must be a list with at least one SPU id"))
        return []
    bad = [(i, r) for i, r in enumerate(replicas) if not (_is_int(r) and r >= 0)]
    if bad:
        problems += [MapProblem(position, "non-negative-integers",
                                f"replica {i} is {describe_value(r)}, expected an SPU id "
                                f"(a non-negative integer)") for i, r in bad]
        return []
    if len(set(replicas)) != len(replicas):
        twice = sorted({r for r in replicas if replicas.count(r) > 1})
        problems.append(MapProblem(
            position, "unique", f"replicas must be unique; SPU "
                                f"{', '.join(map(str, twice))} appears more than once"))
    return list(replicas)


def describe_value(value: object) -> str:
    """A JSON value in words, for messages people read (never a Python repr)."""
    if isinstance(value, bool):
        return "true/false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f'the text "{value[:40]}"'
    return "a list" if isinstance(value, list) else "an object"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _cross_entry_problems(replica_map: ReplicaMap) -> list[MapProblem]:
    lengths = [len(r) for r in replica_map if r]
    if not lengths:
        return []
    expected = lengths[0]
    return [MapProblem(p, "same-length",
                       f"all partitions must have the same number of replicas "
                       f"(partition 0 has {expected}, this one {len(r)})")
            for p, r in enumerate(replica_map) if r and len(r) != expected]


def cluster_problems(replica_map: ReplicaMap,
                     spu_ids: Collection[int]) -> list[MapProblem]:
    """The rules DESIGN.md adds: SPUs exist and the replica count fits."""
    known = set(spu_ids)
    problems: list[MapProblem] = []
    replication = len(replica_map[0]) if replica_map else 0
    if replication > len(known):
        problems.append(MapProblem(
            None, "fits-cluster",
            f"replication {replication} needs {replication} SPUs but the "
            f"cluster has {len(known)}"))
    for pid, replicas in enumerate(replica_map):
        unknown = [r for r in replicas if r not in known]
        if unknown:
            problems.append(MapProblem(
                pid, "spu-exists",
                f"SPU {', '.join(map(str, unknown))} "
                f"{'are' if len(unknown) > 1 else 'is'} not registered"))
    return problems


def to_file(replica_map: ReplicaMap) -> dict[str, list[dict[str, object]]]:
    """The object shape of 000, which every Fluvio release reads."""
    return {"partitions": [{"id": pid, "replicas": list(replicas)}
                           for pid, replicas in enumerate(replica_map)]}
