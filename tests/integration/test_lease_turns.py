"""The hot state's lease is taken in turn: a producer waiting behind a tick is served
before the next tick, however busy the ticks (issue 36, item 4)."""
from __future__ import annotations

import threading

import pytest

from cluster.adapters import lease
from cluster.ports import bound_to_store
from cluster.engine.store_identity import check_hot_state_identity

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def wait_until(condition, what: str, limit_s: float = 10.0) -> None:
    done = threading.Event()
    for _ in range(int(limit_s / 0.01)):
        if condition():
            return
        done.wait(0.01)
    raise AssertionError(f"never happened: {what}")


@pytest.fixture
def store(redis_url):
    return check_hot_state_identity()


def test_a_producer_waiting_behind_a_tick_goes_before_the_next_tick(store):
    """Ticks that take the lease again the moment they let it go: on a lock taken by
    polling, the producer's poll never fell in the gap and it starved."""
    turns: list[str] = []
    producer_done = threading.Event()

    def ticker() -> None:
        with bound_to_store(store):
            for _ in range(4):
                with lease.held(10):
                    turns.append("tick")
                    # Held until another holder waits: each tick overlaps the next wait.
                    wait_until(lambda: lease.waiting() > 0 or producer_done.is_set(),
                               "a producer waiting")

    def producer() -> None:
        with bound_to_store(store), lease.held(10):
            turns.append("produce")
        producer_done.set()

    ticks = threading.Thread(target=ticker)
    ticks.start()
    wait_until(lambda: turns == ["tick"], "the first tick holding the lease")
    writer = threading.Thread(target=producer)
    writer.start()
    writer.join(30)
    ticks.join(30)
    assert turns[:2] == ["tick", "produce"]
    assert lease.waiting() == 0


def test_a_waiter_that_gives_up_leaves_the_line(store):
    with bound_to_store(store), lease.held(1):
        with pytest.raises(TimeoutError):
            lease.acquire(0.1)
        assert lease.waiting() == 0


def test_a_place_in_line_not_kept_up_is_dropped_after_a_lease(store, settings):
    """A waiter that died: the next one is not held up for more than a lease."""
    settings.REPLICATION_LOCK_LEASE_S = 0.2
    with bound_to_store(store):
        client = lease.client()
        client.zadd(lease.key("lock:waiters"), {"1": 1})
        client.hset(lease.key("lock:waiting"), "1", 0)  # last seen at the epoch
        with lease.held(1):
            pass
        assert lease.waiting() == 0
