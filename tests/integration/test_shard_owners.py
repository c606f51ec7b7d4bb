"""Sticky shards: a node keeps the shards it stepped, up to its fair share, and gives
back the rest so a node that joins later gets some (cluster/adapters/shard_owners.py)."""
from __future__ import annotations

import pytest

from cluster.adapters import shard_owners
from cluster.adapters.shard_owners import decide, fresh

TICK = 1000


def claims(**owners: str) -> dict[str, tuple[str, int]]:
    return {shard[1:]: (queue, 0) for shard, queue in owners.items()}


def test_a_node_claims_a_free_shard_while_under_its_fair_share():
    assert decide(0, "a", {}, nodes=2, shards=4) is True
    assert decide(2, "a", claims(s0="a", s1="b"), nodes=2, shards=4) is True
    assert decide(3, "a", claims(s0="a", s2="a", s1="b"), nodes=2, shards=4) is None


def test_a_node_keeps_its_shard_and_leaves_another_nodes_alone():
    assert decide(0, "a", claims(s0="a", s1="b"), nodes=2, shards=4) is True
    assert decide(1, "a", claims(s0="a", s1="b"), nodes=2, shards=4) is None


def test_a_node_over_its_share_gives_one_back_when_another_node_is_alive():
    alone = claims(s0="a", s1="a", s2="a", s3="a")
    assert decide(0, "a", alone, nodes=1, shards=4) is True
    assert decide(0, "a", alone, nodes=2, shards=4) is False


def test_claims_and_presences_older_than_a_few_ticks_are_a_dead_nodes():
    entries = {b"0": b"q.node.a 10000", b"1": b"q.node.b 1000"}
    assert fresh(entries, now_ms=10_000 + shard_owners.STALE_TICKS * TICK, tick_ms=TICK) == {
        "0": ("q.node.a", 10000)}


@pytest.mark.redis
@pytest.mark.django_db
def test_routes_name_the_fresh_owner_of_a_live_node_only(redis_url):
    from cluster.adapters.redis_keys import bound_to_store, client

    with bound_to_store():
        client().hset(shard_owners.nodes_key(), mapping={"q.node.a": "5000", "q.node.b": "0"})
        for shard, mine in ((0, "q.node.a"), (1, "q.node.b")):
            client().hset(shard_owners.owners_key(), str(shard), f"{mine} 5000")
        assert shard_owners.routes(4, now_ms=5000, tick_ms=TICK) == {0: "q.node.a"}
        shard_owners.after_step(2, "q.node.a", 4, now_ms=5000, tick_ms=TICK)
        assert shard_owners.routes(4, now_ms=5000, tick_ms=TICK) == {0: "q.node.a",
                                                                   2: "q.node.a"}
