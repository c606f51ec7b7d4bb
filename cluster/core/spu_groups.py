"""SPU-group provisioning (003): a group owns managed SPUs min_id..min_id+replicas-1."""
from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from enum import Enum

from cluster.core.names import name_problem
from cluster.core.spus import MAX_SPU_ID, rack_problem


class GroupResolution(str, Enum):
    INIT = "Init"
    INVALID = "Invalid"
    RESERVED = "Reserved"


MAX_GROUP_REPLICAS = 1000
SIZE_PATTERN = r"^[1-9][0-9]{0,5}(Ki|Mi|Gi|Ti)$"
_SIZE = re.compile(SIZE_PATTERN)


@dataclass(frozen=True)
class GroupPlan:
    resolution: GroupResolution
    reason: str = ""
    add: tuple[int, ...] = ()
    remove: tuple[int, ...] = ()


def group_input_problems(name: str, replicas: int, min_id: int,
                         storage_size: str, rack: str = "") -> list[str]:
    """Problems that make the request itself unusable (nothing is stored)."""
    problems = [p for p in [name_problem(name, "SPU group")] if p]
    if not 1 <= replicas <= MAX_GROUP_REPLICAS:
        problems.append(f"replicas must be between 1 and {MAX_GROUP_REPLICAS}")
    if min_id < 0:
        problems.append("min-id must be a non-negative integer")
    elif min_id + max(replicas, 1) - 1 > MAX_SPU_ID:
        problems.append(f"the group's SPU ids {min_id}..{min_id + replicas - 1} go past "
                        f"the largest SPU id, {MAX_SPU_ID}")
    if rack and rack_problem(rack):
        problems.append(rack_problem(rack))
    if not _SIZE.fullmatch(storage_size):
        problems.append(f"storage size {storage_size!r} must look like 1Gi, 512Mi or 2Ti")
    return problems


def plan_group(min_id: int, replicas: int, owned: Collection[int],
               others: Collection[int]) -> GroupPlan:
    """Which SPU ids to add or remove so the group owns exactly its range.

    ``owned`` are the group's current SPUs and ``others`` every other SPU;
    scaling down drops the highest ids, as 003 says.
    """
    wanted = range(min_id, min_id + replicas)
    clash = sorted(set(wanted) & set(others))
    if clash:
        return GroupPlan(GroupResolution.INVALID,
                         reason=f"SPU id{'s' if len(clash) > 1 else ''} "
                                f"{', '.join(map(str, clash))} already in use; "
                                f"the group needs ids {min_id}..{min_id + replicas - 1}")
    add = tuple(i for i in wanted if i not in set(owned))
    remove = tuple(sorted((i for i in owned if i not in wanted), reverse=True))
    return GroupPlan(GroupResolution.RESERVED, add=add, remove=remove)


def default_min_id(existing: Collection[int]) -> int:
    """Next id after every SPU, so a new group never collides by default."""
    return max(existing, default=-1) + 1
