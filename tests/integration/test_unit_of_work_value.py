"""``with engine.unit(...) as u``: a unit of work as a value (issue 32). Leaving the block
commits the state, what it staged and what it logged in one fenced write and hands back
the frozen record; an exception inside it, or a refused commit, leaves nothing."""
from __future__ import annotations

import pytest

from cluster.adapters import hot_state, metadata_log
from cluster.adapters.lease import LeaseLost, WriteOp
from cluster.ports import bound_to_store
from cluster.engine.engine import current
from cluster.models import Event, Partition
from cluster.services import replication, topic_create
from cluster.services.waiting import LocalQueue
from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def _orders(settings, shards: int) -> None:
    settings.REPLICATION_SHARDS = shards
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 600
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=2, replication=3)
    replication.replication_tick(dispatch=LocalQueue())


@pytest.fixture(params=[1, 4], ids=["one-shard", "four-shards"])
def orders(request, redis_url, settings):
    _orders(settings, request.param)


@pytest.fixture
def orders_sharded(redis_url, settings):
    _orders(settings, 4)


@pytest.fixture
def orders_unsharded(redis_url, settings):
    _orders(settings, 1)


def _mark(value: str) -> WriteOp:
    return WriteOp("set", hot_state.key("unit-test-mark"), value)


def _read_mark() -> bytes | None:
    with bound_to_store():
        return hot_state.client().get(hot_state.key("unit-test-mark"))


def _head() -> int:
    with bound_to_store():
        return metadata_log.head()


@pytest.mark.parametrize("scope", [{"keys": [("orders", 1)]}, {"whole": True}, {"shard": 0}],
                         ids=["keys", "whole", "shard"])
def test_leaving_the_block_commits_what_it_staged_and_logged_and_returns_the_record(
        orders, scope):
    ran: list[str] = []
    with current().unit(dispatch=LocalQueue(), **scope) as u:
        assert ("orders", 1) in u.state.state.replica_sets or "shard" in scope
        u.log({"type": "unit-test", "n": 1})
        u.stage([_mark("landed")])
        u.after_commit(lambda: ran.append(f"after, mark {_read_mark()!r}"))
        assert _read_mark() is None and u.committed is None  # nothing before the commit
    assert ran == ["after, mark b'landed'"]
    record = u.committed
    assert record is not None
    (entry,) = [e for e in record.entries if e.data["type"] == "unit-test"]
    with bound_to_store():
        assert metadata_log.read(entry.offset, 1)[0].data["n"] == 1
    with pytest.raises(AttributeError):
        record.saved = ()  # type: ignore[misc]


def test_an_exception_inside_the_block_commits_nothing_and_releases_the_leases(orders):
    head, events, ran = _head(), Event.objects.count(), []
    with pytest.raises(ValueError):
        with current().unit(keys=[("orders", 0)], dispatch=LocalQueue()) as u:
            u.log({"type": "unit-test"})
            u.stage([_mark("never")])
            u.after_commit(lambda: ran.append("after"))
            raise ValueError("the block failed")
    assert u.committed is None and ran == []
    assert (_head(), Event.objects.count(), _read_mark()) == (head, events, None)
    # The leases went back: the next unit takes them at once.
    with current().unit(keys=[("orders", 0)], lock_timeout_s=0.5, dispatch=LocalQueue()):
        pass


def test_a_refused_commit_leaves_no_staged_write_no_entry_and_runs_nothing_after(orders):
    head, events, ran, taken = _head(), Event.objects.count(), [], []
    with pytest.raises(LeaseLost):
        with current().unit(keys=[("orders", 0)], dispatch=LocalQueue()) as u:
            u.log({"type": "unit-test"})
            u.stage([_mark("refused")])
            u.after_commit(lambda: ran.append("after"))
            for lock_key in u.held.names:  # another holder takes every lease
                hot_state.client().set(lock_key, "another holder's token")
                taken.append(lock_key)
    hot_state.client().delete(*taken)
    assert u.committed is None and ran == []
    assert (_head(), Event.objects.count(), _read_mark()) == (head, events, None)


def test_a_unit_names_one_scope(orders):
    with pytest.raises(TypeError):
        current().unit(keys=[("orders", 0)], whole=True)
    with pytest.raises(TypeError):
        current().unit()


def test_a_block_producing_more_records_than_reserved_commits_nothing(orders_sharded):
    """Sharded, a unit's record ids are a block reserved at its load: past it they could
    collide with another shard's, so nothing is saved."""
    from cluster.core import replication as core
    from cluster.core.replication import Acks, ProduceRequest

    head = _head()
    with pytest.raises(RuntimeError, match="ids reserved"):
        with current().unit(keys=[("orders", 0)], record_ids=1, dispatch=LocalQueue()) as u:
            u.actions += core.produce(u.state.state,
                                      ProduceRequest("orders", 0, Acks.LEADER, 2)).actions
    assert u.committed is None and _head() == head


def test_unsharded_shard_zero_is_the_whole_state_under_the_one_lease(orders_unsharded):
    with current().unit(shard=0, dispatch=LocalQueue()) as u:
        assert u.state.scope == (hot_state.key("lock"),)
        assert {k for k in u.state.state.replica_sets} == {("orders", 0), ("orders", 1)}
    with pytest.raises(ValueError):
        current().unit(shard=1)


def test_a_unit_holds_its_leases_as_a_value_and_its_offsets_rows_carry_their_token(orders):
    """No ambient "current leases": what a unit holds is ``u.held``, and the rows the resync
    heals (one unit a shard) are tagged with the token of the unit that healed them, above
    every earlier holder's and below every later one's."""
    with current().unit(whole=True, dispatch=LocalQueue()) as before:
        assert before.held.names == before.state.scope and before.held.token > 0
    Partition.objects.filter(topic__name="orders").update(hw=5)  # ahead of the hot state
    assert replication.replication_resync_store() == 2
    with current().unit(whole=True, dispatch=LocalQueue()) as after:
        pass
    tokens = list(Partition.objects.filter(topic__name="orders")
                  .values_list("written_by", flat=True))
    assert all(before.held.token < t < after.held.token for t in tokens), tokens
    assert set(Partition.objects.filter(topic__name="orders").values_list("hw", flat=True)) \
        == {0}


def test_a_discarded_block_commits_nothing_asks_for_no_tick_and_lets_the_leases_go(orders):
    """``u.discard()``: the quiet tick that finds it needs every set, a repair that finds
    nothing to repair."""
    head, events, asked = _head(), Event.objects.count(), []
    with current().unit(whole=True, dispatch=asked.append) as u:
        u.log({"type": "unit-test"})
        u.stage([_mark("discarded")])
        u.after_commit(lambda: asked.append("after"))
        u.discard()
    assert u.committed is None and asked == []
    assert (_head(), Event.objects.count(), _read_mark()) == (head, events, None)
    with current().unit(whole=True, lock_timeout_s=0.5, dispatch=LocalQueue()):
        pass


def test_a_meta_unit_holds_the_cluster_lease_reads_no_set_and_saves_the_meta_alone(
        orders_sharded):
    """The coordinator's quiet tick: the shards' ticks go on meanwhile, since it neither
    holds their leases nor writes their sets."""
    import json

    from cluster.adapters import unloaded

    def stored() -> tuple[dict, dict]:
        with bound_to_store():
            client = hot_state.client()
            return (client.hgetall(hot_state.sets_key("orders")),
                    json.loads(client.get(hot_state.key("meta"))))

    sets_before, _ = stored()
    asked: list[object] = []
    with current().unit(meta=True, dispatch=asked.append) as u:
        assert u.held.names == (hot_state.key("lock"),)
        with pytest.raises(unloaded.NeedsWholeState):
            u.state.state.replica_sets.get(("orders", 0))
        with current().unit(shard=0, lock_timeout_s=0.5, dispatch=LocalQueue()):
            pass  # a shard's lease is free
        u.state.racks["meta-unit"] = "noted"
        u.log({"type": "unit-test"})
    record = u.committed
    assert record is not None and record.saved == () and not record.meta_saved
    assert [e.data["type"] for e in record.entries] == ["unit-test"]
    assert asked == []  # no set loaded: no election deadline to ask a tick for
    sets_after, meta = stored()
    assert meta["racks"]["meta-unit"] == "noted" and sets_after == sets_before
