"""Rows are staged only for block groups a viewer watches; the others' sequences step,
so a page rendered before the change and greeted after it still resyncs."""
from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from tests.live_sockets import drain, open_socket, run_in_fresh_loop, session_cookie

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def application(redis_url):
    from channels.layers import channel_layers
    channel_layers.backends.clear()  # rebuild the layer on the test Redis
    from webapp.asgi import application
    return application


def changes(*partitions: int):
    from cluster.adapters.hot_state import Summary
    from cluster.adapters.live_batches import Changed
    from cluster.core.replication.state import Resolution

    summary = Summary(1, (1, 2), Resolution.ONLINE, 5, 7, ((1, 7, 5), (2, 7, 5)))
    keys = [("orders", p) for p in partitions]
    return Changed(keys, dict.fromkeys(keys, summary))


@pytest.fixture
def staged(monkeypatch) -> dict:
    """What staging hands to Redis, group -> fields (it is still staged as usual)."""
    from cluster.adapters import live_batches

    seen: dict = {}
    real = live_batches._stage_fields

    def spy(fields, events, loads=None):
        for group, rows in fields.items():
            seen.setdefault(group, {}).update(rows)
        real(fields, events, loads)

    monkeypatch.setattr(live_batches, "_stage_fields", spy)
    return seen


def test_a_change_to_an_unwatched_block_stages_no_row_but_steps_its_sequence(redis_url, staged):
    from cluster.adapters.live_batches import _stage_changed, current_seq

    before = current_seq("topic-orders.0")
    _stage_changed(changes(0, 1), set())
    assert "topic-orders.0" not in staged
    assert current_seq("topic-orders.0") == before + 1  # one step per staging, not per row


def test_a_watched_block_gets_its_rows_and_its_neighbour_does_not(redis_url, staged):
    from cluster.adapters.live_batches import _stage_changed, current_seq
    from cluster.adapters.live_seqs import watch

    watch(["topic-orders.0"])
    unwatched_seq = current_seq("topic-orders.1")
    _stage_changed(changes(0, 200), set())
    assert list(staged["topic-orders.0"]) == ["p:orders/0"]
    assert "topic-orders.1" not in staged
    assert current_seq("topic-orders.1") == unwatched_seq + 1


def test_groups_asked_in_several_scripts_answer_as_one_and_step_each_unwatched_once(
        redis_url, monkeypatch):
    from cluster.adapters import live_seqs
    from cluster.adapters.live_seqs import current_seqs, watch, watched

    monkeypatch.setattr(live_seqs, "WATCHED_CHUNK", 3)  # 8 groups: three scripts
    groups = [f"topic-many.{i}" for i in range(8)]
    watch([groups[1], groups[6]])
    before = current_seqs(groups)
    assert watched(groups) == {groups[1], groups[6]}
    after = current_seqs(groups)
    assert [after[g] - before[g] for g in groups] == [1, 0, 1, 1, 1, 1, 0, 1]


def test_a_leader_move_reaches_the_cluster_group_even_when_no_block_is_watched(redis_url):
    from cluster.adapters.live_batches import CLUSTER_GROUP, _stage_changed, current_seq

    before = current_seq(CLUSTER_GROUP)
    _stage_changed(changes(3), {("orders", 3)})
    assert current_seq(CLUSTER_GROUP) > before


def test_a_viewer_counts_itself_in_while_connected_and_out_when_it_leaves(application, viewer):
    from cluster.adapters import hot_state
    from cluster.adapters.live_seqs import watchers_key

    def count() -> int:
        return int(hot_state.client().hget(watchers_key(), "topic-orders.0") or 0)

    cookie = session_cookie(viewer)

    async def scenario():
        socket, _ = await open_socket(application, "/ws/topics/orders/", cookie)
        during = await sync_to_async(count, thread_sensitive=False)()
        await socket.disconnect()
        return during

    assert run_in_fresh_loop(scenario) == 1
    assert count() == 0
    assert hot_state.client().hexists(watchers_key(), "topic-orders.0") is False


def test_a_viewer_of_a_block_receives_the_tick_rows_of_that_block(application, viewer):
    from cluster.adapters.live_batches import _stage_changed

    cookie = session_cookie(viewer)

    async def scenario():
        socket, _ = await open_socket(application, "/ws/topics/orders/", cookie)
        await sync_to_async(_stage_changed, thread_sensitive=False)(changes(0, 5), set())
        got = await drain(socket, quiet_s=0.6)
        await socket.disconnect()
        return got

    got = run_in_fresh_loop(scenario)
    assert sorted(r["partition"] for m in got for r in m.get("partitions", [])) == [0, 5]
