"""Creating replica sets for a topic from its replica map (leader first)."""
from __future__ import annotations

from typing import Mapping, Sequence

from .election import _lrs_changed, _set_resolution, start_election
from .events import Action, LeaderChanged
from .state import (DEFAULT_MAX_LAG, DEFAULT_MIN_LRS, ClusterState, Replica,
                    ReplicaSet, ReplicationError, Resolution, TopicConfig)

ReplicaMap = Mapping[int, Sequence[int]] | Sequence[Sequence[int]]


def _validated(state: ClusterState, name: str, replica_map: ReplicaMap) -> dict[int, list[int]]:
    if name in state.topics:
        raise ReplicationError(f"topic {name!r} already exists")
    items = replica_map.items() if isinstance(replica_map, Mapping) else enumerate(replica_map)
    out = {int(p): [int(s) for s in spus] for p, spus in items}
    if not out:
        raise ReplicationError("a topic needs at least one partition")
    for p, spus in out.items():
        if not spus or len(set(spus)) != len(spus):
            raise ReplicationError(f"partition {p}: replicas must be non-empty and unique")
        unknown = [s for s in spus if s not in state.spus]
        if unknown:
            raise ReplicationError(f"partition {p}: unknown SPU(s) {unknown}")
    return out


def add_topic(state: ClusterState, name: str, replica_map: ReplicaMap, *,
              max_lag: int = DEFAULT_MAX_LAG, min_lrs: int = DEFAULT_MIN_LRS,
              lag_time_max_ms: int | None = None,
              unclean_leader_election: bool = False) -> list[Action]:
    """Create one replica set per partition; the first live-able replica leads."""
    parts = _validated(state, name, replica_map)
    if max_lag < 0 or min_lrs < 1:
        raise ReplicationError("max_lag must be >= 0 and min_lrs >= 1")
    state.topics[name] = TopicConfig(name, max_lag, min_lrs, lag_time_max_ms,
                                     unclean_leader_election)
    actions: list[Action] = []
    for p in sorted(parts):
        rs = ReplicaSet(name, p, parts[p], {s: Replica(s) for s in parts[p]},
                        resolution=Resolution.OFFLINE)
        state.replica_sets[rs.key] = rs
        state.steady.drop(rs.key)  # a new set under a key that may have been steady
        for s in rs.replicas:
            state.index_add(rs.key, s)
        actions += _bootstrap(state, rs)
    return actions


def _bootstrap(state: ClusterState, rs: ReplicaSet) -> list[Action]:
    # Empty logs are all in sync; an offline replica joins the LRS once it fetches.
    live = [s for s in rs.replicas if state.spus[s]]
    rs.lrs = live or [rs.replicas[0]]
    first = rs.replicas[0]
    if not state.spus[first]:
        return start_election(state, rs, f"preferred leader SPU {first} is offline")
    rs.leader, rs.epoch = first, 1
    rs.replica[first].claims_leadership = True
    actions: list[Action] = [LeaderChanged(rs.topic, rs.partition, None, first, rs.epoch)]
    actions += _set_resolution(rs, Resolution.ONLINE, "created")
    actions.append(_lrs_changed(rs))
    return actions
