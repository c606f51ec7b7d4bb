"""The hot state keeps what it acknowledged: one namespace per store, fenced writes,
a lost hot state reported (never zeroed), values trimmed with compaction."""
from __future__ import annotations

import contextvars
import json
import time
from io import StringIO

import pytest
from django.core.management import call_command

from cluster.adapters import hot_state, lease
from cluster.adapters.lease import LeaseLost, WriteOp
from cluster.ports import bound_to_store
from cluster.services.waiting import LocalQueue
from cluster.models import ClusterState, Event, Partition, Topic
from cluster.services import topic_create
from cluster.services.replication import replication_tick
from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def tick() -> None:
    queue = LocalQueue()
    replication_tick(dispatch=queue)
    queue.drain()


def produce(topic: str, *values: str, partition: int = 0) -> dict:
    out = StringIO()
    args = [a for v in values for a in ("--value", v)]
    call_command("produce", topic, "--partition", str(partition), *args, "--acks", "all",
                 "--json", stdout=out)
    return json.loads(out.getvalue())


def consume(topic: str, partition: int = 0) -> list[dict]:
    out = StringIO()
    call_command("consume", topic, "--partition", str(partition), "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def orders(redis_url):
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=2, replication=3)
    tick()


def test_hot_state_left_by_another_database_is_discarded(redis_url):
    """A database made anew reuses topic names and row ids; it must not
    inherit the old store's leaders and logs from Redis, nor delete them."""
    from cluster.engine.store_identity import ensure_hot_state_is_ours, store_id

    client = hot_state.client()
    other = hot_state.key("sets:orders", "some-other-database")
    client.set(hot_state.key("store", "some-other-database"), "some-other-database")
    client.hset(other, "0", b"stale")
    ensure_hot_state_is_ours()
    assert not client.exists(hot_state.sets_key("orders"))
    assert client.get(hot_state.STORE).decode() == store_id() == \
        str(ClusterState.objects.get().store_id)
    client.hset(hot_state.sets_key("orders"), "0", b"ours")
    ensure_hot_state_is_ours()
    assert client.hget(hot_state.sets_key("orders"), "0") == b"ours"
    assert client.hget(other, "0") == b"stale"


def test_every_key_of_a_store_carries_its_id(orders):
    produce("orders", "a")
    ours = f"repl:{{{ClusterState.objects.get().store_id}}}:"
    keys = [k.decode() for k in hot_state.client().scan_iter(match="repl:*")]
    assert keys and all(k.startswith(ours) for k in keys if not k.startswith("repl:live:"))


def test_a_second_store_on_the_same_redis_database_leaves_the_first_intact(orders):
    # Each command a process of its own (a fresh context): it reads the store it serves.
    def alone(call, *args, **kwargs):
        return contextvars.Context().run(call, *args, **kwargs)

    assert alone(produce, "orders", "first-1", "first-2")["state"] == "acknowledged"
    first = ClusterState.objects.get()
    # A second installation: another database (another store id, no Redis recorded yet),
    # the same Redis database.
    ClusterState.objects.filter(pk=first.pk).update(
        store_id="00000000-0000-0000-0000-000000000002", redis_marker="", redis_url="",
        applied_offset=0)
    Partition.objects.update(hw=0, leo=0)
    alone(call_command, "partition", "list", stdout=StringIO())
    assert alone(produce, "orders", "second")["state"] == "acknowledged"
    assert [r["value"] for r in alone(consume, "orders")] == ["second"]
    ClusterState.objects.filter(pk=first.pk).update(store_id=first.store_id,
                                                    redis_marker=first.redis_marker,
                                                    applied_offset=first.applied_offset)
    assert [r["value"] for r in alone(consume, "orders")] == ["first-1", "first-2"]


def test_a_holder_whose_lease_expired_has_its_save_refused(orders, settings):
    settings.REPLICATION_LOCK_LEASE_S = 0.2
    stale = hot_state.load()
    with bound_to_store(), lease.held(1) as held:
        held._stop.set()  # a stopped process renews nothing
        time.sleep(0.5)
        tick()  # another holder took the expired lease and saved
        after = hot_state.client().get(hot_state.META)
        with pytest.raises(LeaseLost):
            hot_state.save(stale, lease.Held((held,)))
    assert hot_state.client().get(hot_state.META) == after


def test_record_values_cannot_be_written_without_the_lease(orders):
    with pytest.raises(RuntimeError):
        lease.fenced_write(lease.Held(), [WriteOp("set", hot_state.key("x"), "1")])


def test_a_lease_held_by_a_live_holder_is_renewed_past_its_length(orders, settings):
    settings.REPLICATION_LOCK_LEASE_S = 1.0
    with bound_to_store(), lease.held(1) as held:
        time.sleep(2.5)
        hot_state.save(hot_state.load(), lease.Held((held,)))  # renewed three times a lease
        with pytest.raises(TimeoutError):
            lease.acquire(0.2)


def test_record_ids_continue_after_a_refused_save(orders, settings):
    produce("orders", "a")
    before = hot_state.load().state.next_record_id
    settings.REPLICATION_LOCK_LEASE_S = 0.2
    with bound_to_store(), lease.held(1) as held:
        hot = hot_state.load()
        hot.state.next_record_id = before - 1
        held._stop.set()
        time.sleep(0.5)
        tick()
        with pytest.raises(LeaseLost):
            hot_state.save(hot, lease.Held((held,)))
    assert hot_state.load().state.next_record_id >= before


def test_a_lost_hot_state_is_refused_then_adopted_and_its_loss_reported_once(orders):
    from cluster.engine.store_identity import HotStateMismatch

    for n in range(3):
        produce("orders", f"v{n}")
    produce("orders", "w", partition=1)
    # A loss restores each partition to its reservation (above every offset given out).
    floors = {i: max(hw, reserved) for i, hw, reserved in
              Partition.objects.values_list("index", "hw", "reserved_to")}
    assert floors[0] > 2 and floors[1] > 0
    hot_state.client().flushdb()  # Redis came back empty: not adopted silently
    with pytest.raises(HotStateMismatch, match="store adopt-redis"):
        tick()
    assert hot_state.client().dbsize() == 0
    assert not Event.objects.filter(operation="hot-state-lost").exists()
    call_command("store", "adopt-redis", stdout=StringIO())
    tick()
    tick()
    assert Event.objects.filter(operation="redis-adopted").count() == 1
    rows = dict(Partition.objects.values_list("index", "hw"))
    assert rows == floors
    event = Event.objects.get(operation="hot-state-lost")
    assert event.object_name == "orders"
    # An upper bound of the four acknowledged records gone: every offset up to the floor.
    assert event.params == {"missing_records": floors[0] + floors[1],
                            "partitions": {"0": floors[0], "1": floors[1]},
                            "restored_hw": {"0": floors[0], "1": floors[1]},
                            "topic_pk": Topic.objects.get(name="orders").pk}
    assert f"up to {floors[0] + floors[1]} committed records" in Topic.objects.get(
        name="orders").reason
    assert produce("orders", "after")["base_offset"] == floors[0]
    assert consume("orders") == [{"offset": floors[0], "value": "after"}]


def test_a_store_hw_above_an_intact_hot_state_is_not_restored(orders):
    """A Redis whose metadata log reaches the store's applied offset lost nothing: a store
    figure above it (here forged) is not a reason to compact records away (issue 18)."""
    produce("orders", "a", "b")
    Partition.objects.filter(index=0).update(hw=5, leo=5)
    meta = json.loads(hot_state.client().get(hot_state.META))
    meta["checked"] = "an earlier Redis run"
    hot_state.client().set(hot_state.META, json.dumps(meta))
    tick()
    assert not Event.objects.filter(operation="hot-state-lost").exists()
    assert [r["value"] for r in consume("orders")] == ["a", "b"]
    from cluster.services.replication import replication_resync_store
    assert replication_resync_store() == 1  # the reconcile beat writes the true figure back
    assert Partition.objects.get(index=0).hw == 2


def test_compaction_drops_the_values_of_compacted_records(orders, settings):
    settings.REPLICATION_LOG_RETENTION = 10
    produce("orders", *[f"v{n}" for n in range(30)])
    tick()
    stored = hot_state.client().hlen(hot_state.values_key("orders"))
    assert stored <= 11
    assert [r["value"] for r in consume("orders")][-1] == "v29"


def test_dropping_released_values_deletes_those_ids_and_creates_no_hash(orders):
    from cluster.adapters.hot_records import drop_values_op

    r, values = hot_state.client(), hot_state.values_key("orders")
    r.delete(values)
    released = list(range(1, 1200)) + [2**40 + 7]  # several HDEL batches, a large id
    assert _run(drop_values_op(values, released)) == 0
    assert not r.exists(values)  # a topic with no values: nothing written
    r.hset(values, mapping={"5": "a", "1199": "b", "1200": "kept", str(2**40 + 7): "c"})
    assert _run(drop_values_op(values, released)) == 3
    assert r.hgetall(values) == {b"1200": b"kept"}


def _run(op: WriteOp) -> int:
    script, keys, args = op.arg
    return hot_state.client().eval(script, len(keys), *keys, *args)


def test_a_topic_deleted_while_a_tick_reads_the_store_does_not_crash_it(orders, monkeypatch):
    from cluster.engine import spu_loops as replication

    topic_create(name="brief", partitions=1, replication=1)
    real = replication._partitions_of

    def deleted_meanwhile(pks):
        Topic.objects.filter(name="brief").delete()
        return real(pks)

    # Between the tick's read of the topic list and that of their partitions.
    monkeypatch.setattr(replication, "_partitions_of", deleted_meanwhile)
    tick()
    monkeypatch.undo()
    tick()
    assert "brief" not in hot_state.replicated_topics()


def test_a_set_saved_in_the_first_format_still_decodes(orders):
    import msgpack

    produce("orders", "a", "b")
    rs = hot_state.load().state.replica_sets[("orders", 0)]
    fields = msgpack.unpackb(hot_state.encode_set(rs))
    assert fields[0] == hot_state.SET_FORMAT and fields[-1] == {}
    first_format = msgpack.packb(fields[1:-1])
    assert hot_state.decode_set(first_format) == rs


@pytest.fixture
def patient_orders(settings, redis_url):
    """``orders`` where a silent follower stays in the LRS however slow the machine is."""
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 600
    settings.REPLICATION_LAG_TIME_MAX_MS = 0
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=2, replication=3)
    tick()


def _pending_write(api) -> tuple[dict, int]:
    """An acks=all write through the API that cannot commit yet (a follower's loop stopped)."""
    follower = hot_state.load().state.replica_sets[("orders", 0)].followers()[0]
    hot_state.kill(follower)
    answer = api.post("/api/topics/orders/produce/?wait=0.5",
                      {"partition": 0, "values": ["x"], "acks": "all"}, format="json")
    assert answer.status_code == 202, answer.json()
    return answer.json(), follower


def test_acks_all_over_the_api_answers_202_with_a_handle_to_poll(patient_orders, api):
    body, follower = _pending_write(api)
    assert body["state"] == "pending" and body["poll"] == f"/api/produce/{body['id']}/"
    assert api.get(body["poll"]).json()["state"] == "pending"
    hot_state.revive(follower)
    tick()
    tick()
    assert api.get(body["poll"]).json() == {"id": body["id"], "state": "acknowledged",
                                            "count": 1, "acked": 1, "code": None, "reason": None}


def test_a_write_committed_after_its_ticket_update_was_lost_still_reads_acknowledged(
        patient_orders, api):
    body, follower = _pending_write(api)
    ticket = hot_state.read_ticket(body["id"])
    hot_state.revive(follower)
    tick()
    tick()
    with hot_state.locked() as held:  # as if the settling process died before this write
        hot_state.write_ticket(held, body["id"], ticket, still_open=False)
    assert api.get(body["poll"]).json()["state"] == "acknowledged"


def test_an_unknown_produce_handle_is_a_404_with_the_error_body(orders, api):
    answer = api.get("/api/produce/999999/")
    assert answer.status_code == 404 and {"error", "details"} <= set(answer.json())


def test_a_wait_beyond_the_produce_limit_is_refused(orders, api, settings):
    answer = api.post(f"/api/topics/orders/produce/?wait={settings.PRODUCE_WAIT_S + 1}",
                      {"partition": 0, "values": ["x"], "acks": "all"}, format="json")
    assert answer.status_code == 400 and "wait" in json.dumps(answer.json())
    assert consume("orders") == []


def test_the_schema_documents_the_202_handle_and_the_outcome_endpoint(api):
    schema = json.loads(api.get("/api/schema/?format=json").content)
    produce_op = schema["paths"]["/api/topics/{name}/produce/"]["post"]
    assert {"200", "202"} <= set(produce_op["responses"])
    assert any(p["name"] == "wait" for p in produce_op["parameters"])
    assert "202" in produce_op["description"] and "poll" in produce_op["description"]
    assert "200" in schema["paths"]["/api/produce/{outcome_id}/"]["get"]["responses"]
