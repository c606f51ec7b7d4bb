"""A fenced write that takes longer than the lease to send (a 100,000-partition tick's
transaction, on a loaded machine) is not refused while nobody else took the lease: the
holder's renewal waits on the write, so the write keeps its own lock alive (issue 36)."""
from __future__ import annotations

import threading

import pytest
from django.test import override_settings

from cluster.adapters import lease, set_records
from cluster.adapters.redis_keys import client, key
from cluster.ports import bound_to_store
from cluster.engine.store_identity import check_hot_state_identity

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def hash_of(n: int) -> lease.WriteOp:
    return lease.WriteOp("hset", key("long-write-hash"), {f"f{i}": "v" for i in range(n)})


def script_of(n: int) -> lease.WriteOp:
    """A save's script setting ``n`` statuses of a typical size, their records unchanged."""
    status = bytes(70)
    op = set_records.Writes().op(None, {key("long-write-hash"): {
        str(i): status for i in range(n)}})
    assert op is not None
    return op


@pytest.mark.parametrize("big", [hash_of, script_of])
@override_settings(REPLICATION_LOCK_LEASE_S=0.3)
def test_a_write_slower_than_the_lease_lands_when_nobody_else_holds_it(redis_url, monkeypatch,
                                                                      big):
    store = check_hot_state_identity()
    apply = lease._apply
    slow = threading.Event()

    def building_slowly(pipe, op):  # the client packing a huge transaction, past the lease
        slow.wait(1.0)
        apply(pipe, op)

    monkeypatch.setattr(lease, "_apply", building_slowly)
    with bound_to_store(store), lease.held_all(5, [lease.CLUSTER_LOCK]) as held:
        lease.fenced_write(held, [big(lease.LARGE_WRITE),
                                  lease.WriteOp("set", key("long-write"), "landed")])
    with bound_to_store(store):
        assert client().get(key("long-write")) == b"landed"
        assert client().hlen(key("long-write-hash")) == lease.LARGE_WRITE


@override_settings(REPLICATION_LOCK_LEASE_S=0.3)
def test_a_large_write_after_another_holder_took_the_lease_is_refused(redis_url):
    """The extension is fenced like a renewal: it never revives a lease another holds."""
    store = check_hot_state_identity()
    big = {f"f{n}": "v" for n in range(lease.LARGE_WRITE)}
    with bound_to_store(store), lease.held(5) as mine:
        client().set(mine.lock_key, "someone-else")
        with pytest.raises(lease.LeaseLost):
            lease.fenced_write(lease.Held((mine,)),
                               [lease.WriteOp("hset", key("refused-hash"), big)])
    with bound_to_store(store):
        assert not client().exists(key("refused-hash"))


SLOW_SCRIPT = """
local t = redis.call('time')
local start = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
repeat
  t = redis.call('time')
until tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - start >= tonumber(ARGV[1])
return 1
"""


@override_settings(REPLICATION_LOCK_LEASE_S=0.3, REDIS_SOCKET_TIMEOUT_S=0.3)
def test_a_large_write_that_redis_runs_for_longer_than_the_socket_timeout_lands(redis_url):
    """A whole tick's one transaction at 1,000,000 partitions ran in Redis past
    REDIS_SOCKET_TIMEOUT_S: the client gave up on the answer, redis-py took that for a
    refusal while watching, and the tick was refused whole, over and over. A large write
    waits for Redis's answer as long as its grace."""
    store = check_hot_state_identity()
    with bound_to_store(store), lease.held_all(5, [lease.CLUSTER_LOCK]) as held:
        lease.fenced_write(held, [hash_of(lease.LARGE_WRITE),
                                  lease.WriteOp("eval", key("slow"), (SLOW_SCRIPT, [], [900])),
                                  lease.WriteOp("set", key("long-write"), "landed")])
        assert not any(taken.lost for taken in held.leases)
    with bound_to_store(store):
        assert client().get(key("long-write")) == b"landed"
