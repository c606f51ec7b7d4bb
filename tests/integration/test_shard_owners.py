"""Sticky shards: a node keeps the shards it stepped, up to its fair share, and gives
back the rest so a node that joins later gets some (cluster/adapters/shard_owners.py)."""
from __future__ import annotations

import pytest

from cluster.adapters import shard_owners
from cluster.adapters.shard_owners import decide, fresh

TICK = 1000


def claims(**owners: str) -> dict[int, str]:
    return {int(shard[1:]): queue for shard, queue in owners.items()}


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


def test_a_busy_node_keeps_every_claim_while_it_steps_any_of_its_shards():
    # Node a works through a backlog: shard 0 was stepped long ago, shard 1 just now.
    now = 100_000
    entries = {b"0": f"q.node.a {now - (shard_owners.CLAIM_TICKS - 1) * TICK}".encode(),
               b"1": f"q.node.a {now - 10}".encode(),
               b"2": f"q.node.b {now - (shard_owners.CLAIM_TICKS + 1) * TICK}".encode()}
    alive = {"q.node.a", "q.node.b"}
    assert shard_owners.claims_of_live_nodes(entries, alive, now, TICK) == {
        0: "q.node.a", 1: "q.node.a"}


def test_a_node_held_by_a_long_task_keeps_its_shards_for_a_while_then_loses_them_all():
    stepped = 50_000
    entries = {b"0": f"q.node.a {stepped}".encode(), b"1": f"q.node.a {stepped}".encode()}
    alive = {"q.node.a"}
    # Past the presence's few ticks (a reconcile of a few seconds) it keeps them ...
    later = stepped + (shard_owners.STALE_TICKS + 2) * TICK
    assert shard_owners.claims_of_live_nodes(entries, alive, later, TICK) == {
        0: "q.node.a", 1: "q.node.a"}
    # ... and past CLAIM_TICKS without a step, they go back to the shared queue.
    much_later = stepped + (shard_owners.CLAIM_TICKS + 1) * TICK
    assert shard_owners.claims_of_live_nodes(entries, alive, much_later, TICK) == {}


def test_a_dead_nodes_recent_claims_count_for_nothing():
    entries = {b"0": b"q.node.a 9000", b"1": b"q.node.b 9000"}
    assert shard_owners.claims_of_live_nodes(entries, {"q.node.a"}, 10_000, TICK) == {
        0: "q.node.a"}


@pytest.mark.redis
@pytest.mark.django_db
def test_a_live_node_takes_a_dead_nodes_shard_when_it_steps_it(redis_url):
    from cluster.adapters.redis_keys import client
    from cluster.ports import bound_to_store

    with bound_to_store():
        # b stepped shard 1 a tick ago, then died: its presence is past STALE_TICKS.
        client().hset(shard_owners.nodes_key(), mapping={"q.node.a": "10000", "q.node.b": "0"})
        client().hset(shard_owners.owners_key(), "1", "q.node.b 9000")
        shard_owners.after_step(1, "q.node.a", 4, now_ms=10_000, tick_ms=TICK)
        assert shard_owners.routes(4, now_ms=10_000, tick_ms=TICK) == {1: "q.node.a"}


@pytest.mark.redis
@pytest.mark.django_db
def test_routes_name_the_fresh_owner_of_a_live_node_only(redis_url):
    from cluster.adapters.redis_keys import client
    from cluster.ports import bound_to_store

    with bound_to_store():
        client().hset(shard_owners.nodes_key(), mapping={"q.node.a": "5000", "q.node.b": "0"})
        for shard, mine in ((0, "q.node.a"), (1, "q.node.b")):
            client().hset(shard_owners.owners_key(), str(shard), f"{mine} 5000")
        assert shard_owners.routes(4, now_ms=5000, tick_ms=TICK) == {0: "q.node.a"}
        shard_owners.after_step(2, "q.node.a", 4, now_ms=5000, tick_ms=TICK)
        assert shard_owners.routes(4, now_ms=5000, tick_ms=TICK) == {0: "q.node.a",
                                                                   2: "q.node.a"}


@pytest.mark.redis
@pytest.mark.django_db
def test_the_whole_tick_is_routed_to_the_node_that_ran_it_last_while_it_lives(redis_url):
    from cluster.adapters.redis_keys import client
    from cluster.ports import bound_to_store

    with bound_to_store():
        assert shard_owners.tick_route(now_ms=5000, tick_ms=TICK) is None  # nobody yet
        client().hset(shard_owners.nodes_key(), mapping={"q.node.a": "5000", "q.node.b": "5000"})
        shard_owners.tick_done("q.node.a", now_ms=5000, ran=True)
        assert shard_owners.tick_route(now_ms=5000, tick_ms=TICK) == "q.node.a"
        # Shard routes never take the tick's field for a shard.
        assert shard_owners.routes(4, now_ms=5000, tick_ms=TICK) == {}
        # An owner that stopped claiming (busy with a long task, or dead) is nobody's.
        late = 5000 + (shard_owners.STALE_TICKS + 1) * TICK
        client().hset(shard_owners.nodes_key(), "q.node.a", str(late))
        assert shard_owners.tick_route(now_ms=late, tick_ms=TICK) is None
        # Unless it is running a tick, however long: it keeps the tick meanwhile.
        shard_owners.tick_started("q.node.a", now_ms=5000)
        assert shard_owners.tick_route(now_ms=late, tick_ms=TICK) == "q.node.a"
        shard_owners.tick_done("q.node.a", now_ms=late, ran=False)  # it found the tick held
        assert shard_owners.tick_route(now_ms=late, tick_ms=TICK) is None
        # A fresh claim by a node whose presence is gone is nobody's either.
        shard_owners.tick_done("q.node.b", now_ms=late, ran=True)
        client().hset(shard_owners.nodes_key(), "q.node.b", "0")
        assert shard_owners.tick_route(now_ms=late, tick_ms=TICK) is None


@pytest.fixture
def node_queue():
    from cluster import tasks

    saved = list(tasks._node_queue)
    tasks._node_queue[:] = ["q.node.mine"]
    yield tasks._node_queue[0]
    tasks._node_queue[:] = saved


@pytest.mark.redis
@pytest.mark.django_db
def test_a_tick_landing_on_another_node_is_forwarded_to_the_owner_and_runs_nowhere_else(
        redis_url, node_queue, monkeypatch):
    from cluster import tasks
    from cluster.adapters import hot_state
    from cluster.adapters.redis_keys import client
    from cluster.ports import bound_to_store
    from cluster.services import spu_register

    spu_register(spu_id=1)
    sent = []
    monkeypatch.setattr(tasks.replication_tick, "apply_async",
                        lambda **options: sent.append(options))
    now = int(__import__("time").time() * 1000)
    with bound_to_store():
        client().hset(shard_owners.nodes_key(), mapping={"q.node.owner": str(now),
                                                         node_queue: str(now)})
        shard_owners.tick_done("q.node.owner", now_ms=now, ran=True)
    assert tasks.replication_tick() is None
    assert [(s["queue"], s["kwargs"]) for s in sent] == [("q.node.owner", {"forwarded": True})]
    assert hot_state.load().state.spus == {}  # this node ran no tick
    # The forwarded task runs where it lands, and that node owns the tick from then on.
    assert tasks.replication_tick(forwarded=True)["sets"] == 0
    assert hot_state.load().state.spus == {1: False}
    with bound_to_store():
        assert shard_owners.tick_route(now_ms=now, tick_ms=TICK) == node_queue
    assert tasks.replication_tick() is not None and len(sent) == 1  # the owner runs its own


@pytest.mark.redis
@pytest.mark.django_db
def test_beat_sends_the_tick_to_its_owner_and_the_long_periodic_tasks_elsewhere(redis_url,
                                                                                settings):
    import time

    from cluster.adapters.redis_keys import client
    from cluster.ports import bound_to_store
    from cluster.routes import route_task

    def route(name: str) -> dict[str, str] | None:
        # In a fresh context, as beat sends: nothing bound but what the router binds.
        import contextvars

        return contextvars.Context().run(route_task, name, (), {}, {})

    assert route("cluster.tasks.replication_tick") is None  # no owner yet: the shared queue
    now = int(time.time() * 1000)
    with bound_to_store():
        client().hset(shard_owners.nodes_key(), mapping={"q.node.a": str(now),
                                                         "q.node.b": str(now)})
        shard_owners.tick_done("q.node.a", now_ms=now, ran=True)
    assert route("cluster.tasks.replication_tick") == {"queue": "q.node.a"}
    for name in ("healing.tasks.healing_check", "cluster.tasks.reconcile_topics",
                 "history.tasks.history_snapshot", "cluster.tasks.leader_rebalance_check"):
        assert route(name) == {"queue": "q.node.b"}, name
    assert route("planner.tasks.compute_plan") is None  # anything else: as before
    with bound_to_store():
        client().hdel(shard_owners.nodes_key(), "q.node.b")
    assert route("healing.tasks.healing_check") is None  # no other live node
    settings.REPLICATION_SHARDS = 4
    assert route("cluster.tasks.replication_tick") is None  # shards have owners of their own


@pytest.mark.redis
@pytest.mark.django_db
def test_sharded_each_long_periodic_task_keeps_to_one_live_node(redis_url, settings):
    """Each worker holds its shards alone, so the tasks that read the whole cluster go to
    the same node run after run, where what they read last is still at hand."""
    import contextvars
    import time

    from cluster.adapters.redis_keys import client
    from cluster.ports import bound_to_store
    from cluster.routes import AWAY_FROM_THE_TICK, route_task

    def route(name: str) -> dict[str, str] | None:
        return contextvars.Context().run(route_task, name, (), {}, {})

    settings.REPLICATION_SHARDS = 4
    assert route("healing.tasks.healing_check") is None  # no live node: the shared queue
    now = int(time.time() * 1000)
    nodes = {f"q.node.{n}": str(now) for n in "abc"}
    with bound_to_store():
        client().hset(shard_owners.nodes_key(), mapping=nodes)
    first = {name: route(name) for name in AWAY_FROM_THE_TICK}
    assert all(queue is not None and queue["queue"] in nodes for queue in first.values())
    assert len({queue["queue"] for queue in first.values()}) > 1  # spread, not all on one
    assert {name: route(name) for name in AWAY_FROM_THE_TICK} == first  # run after run
    assert route("cluster.tasks.replication_tick") is None
    gone = first["healing.tasks.healing_check"]["queue"]
    with bound_to_store():
        client().hset(shard_owners.nodes_key(), gone, "0")  # that node died
    assert route("healing.tasks.healing_check")["queue"] in set(nodes) - {gone}


@pytest.mark.django_db
def test_a_route_that_redis_cannot_give_is_the_shared_queue(settings):
    from cluster.routes import route_task

    # No redis_url: this test's Redis refuses every connection.
    assert route_task("cluster.tasks.replication_tick", (), {}, {}) is None


@pytest.mark.redis
@pytest.mark.django_db
def test_a_queue_given_to_apply_async_wins_over_the_route(redis_url):
    import time

    from cluster.adapters.redis_keys import client
    from cluster.ports import bound_to_store
    from webapp.celery import app

    now = int(time.time() * 1000)
    with bound_to_store():
        client().hset(shard_owners.nodes_key(), mapping={"q.node.a": str(now)})
        shard_owners.tick_done("q.node.a", now_ms=now, ran=True)
    router = app.amqp.router
    assert router.route({}, "cluster.tasks.replication_tick")["queue"].name == "q.node.a"
    given = router.route({"queue": "q.node.z"}, "cluster.tasks.replication_tick")
    assert given["queue"].name == "q.node.z"
