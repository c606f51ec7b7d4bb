"""A page's partitions' offsets (HW, LEO, each replica's) read from the hot state.

The store's HW/LEO columns trail the hot state by up to the mirror's interval
(engine/mirror.py), so what shows offsets reads the sets' statuses: one ``HMGET`` of the
page's partitions per topic, and only the offsets decoded from each status (no record
ids, no replica set built). Where the hot state cannot be read (Redis not answering,
another store's Redis), the caller keeps the row's figures.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import NamedTuple

from cluster.adapters.set_codec import status_fields
from cluster.core.replication import Key
from cluster.core.replication.summary import ReplicaStatus

log = logging.getLogger(__name__)


class Offsets(NamedTuple):
    """A set's HW and LEO (its leader's; without a leader its longest log's), and each
    replica's as the store's ``replica_status`` column holds them."""
    hw: int
    leo: int
    replica_status: list[ReplicaStatus]


def offsets_of(data: bytes) -> Offsets:
    """The offsets of one stored status (set_codec's fields, any format)."""
    fields = status_fields(data)
    replicas, leader, hw, states = fields[3], fields[4], fields[7], fields[15]
    status: list[ReplicaStatus] = []
    for spu, state in zip(replicas, states):
        log_enc, replica_hw = state[0], state[1]
        # A replica's log is stored as its LEO, or as [start, retained ids].
        leo = log_enc if isinstance(log_enc, int) else log_enc[0] + len(log_enc[1])
        status.append(ReplicaStatus(spu=spu, leo=leo, hw=replica_hw))
    leos = {r["spu"]: r["leo"] for r in status}
    leo = leos[leader] if leader in leos else max(leos.values(), default=0)
    return Offsets(hw, leo, status)


def hot_offsets(keys: Iterable[Key]) -> dict[Key, Offsets]:
    """The offsets of the sets of ``keys`` the hot state holds; none when it cannot be
    read (the caller shows the store's rows, a mirror interval old at most)."""
    wanted = list(keys)
    if not wanted:
        return {}
    # Here, not at the top: the row-only commands (``spu list``, ``topic describe``) import
    # this module through selectors/shapes.py and must start without Redis or the engine
    # (composition/startup.py, tests/integration/test_command_startup.py).
    import redis

    from cluster.adapters.redis_keys import bound_to_store
    from cluster.adapters.set_loading import fetch_some
    from cluster.engine.store_identity import HotStateMismatch, check_hot_state_identity

    try:
        with bound_to_store(check_hot_state_identity()):
            # Every topic named: one the hot state lacks comes back empty from the HMGET.
            fetched = fetch_some(wanted, {name: None for name, _ in wanted})
    except (redis.RedisError, HotStateMismatch) as exc:
        log.debug("offsets from the store's rows: %s", exc)
        return {}
    return {key: offsets_of(data) for key, data in fetched}

