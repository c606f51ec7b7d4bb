"""What the real scrape found (issue 20): a sharded tick counted once per shard task, and an
LRS shrink and re-expand inside one step not counted at all."""
from __future__ import annotations

import pytest

from cluster.adapters import shards
from cluster.services.waiting import LocalQueue
from cluster.core.replication import LrsChanged
from cluster.metrics.hooks import count_step
from cluster.services import topic_create
from cluster.services.replication import (replication_coordinate, replication_shard_tick,
                                          replication_tick)
from tests.helpers import register_spus
from tests.integration.test_metrics_endpoint import sample, scrape

pytestmark = [pytest.mark.django_db, pytest.mark.redis]
SHARDS = 4
TICKS = "controlroom_replication_tick_seconds_count"
SHARD_TASKS = "controlroom_replication_shard_tick_seconds_count"


@pytest.fixture
def sharded(redis_url, settings, monkeypatch):
    settings.REPLICATION_SHARDS = SHARDS
    monkeypatch.setattr(shards, "BLOCK", 4)  # 16 partitions over 4 shards
    register_spus(0, 1, 2, 3, online=True)
    topic_create(name="orders", partitions=16, replication=3)
    queue = LocalQueue()
    replication_tick(dispatch=queue)
    queue.drain()


def sharded_tick() -> int:
    """The coordinator, then each shard's task as the workers run them; how many shard tasks."""
    queue = LocalQueue()
    work = replication_coordinate(dispatch=queue) or {}
    for shard, quotas in work.items():
        replication_shard_tick(shard, quotas=quotas, dispatch=queue)
    queue.drain()
    return len(work)


def test_a_sharded_tick_counts_one_tick_and_times_each_shard_task_apart(client, sharded):
    before = scrape(client)
    tasks = [sharded_tick() for _ in range(3)]
    after = scrape(client)
    assert SHARDS in tasks  # quiet ticks ran their shards as tasks
    assert sample(after, TICKS) == sample(before, TICKS) + 3
    assert sample(after, SHARD_TASKS) == sample(before, SHARD_TASKS) + sum(tasks)
    assert sample(after, "controlroom_replication_shard_tick_seconds_sum") > 0


def test_a_coordinator_that_runs_the_whole_tick_itself_counts_it_once(client, sharded):
    from cluster.services.outages import spu_offline

    spu_offline(spu_id=3)  # a status change: the coordinator runs the whole tick
    before = scrape(client)
    assert sharded_tick() == 0
    after = scrape(client)
    assert sample(after, TICKS) == sample(before, TICKS) + 1
    assert sample(after, SHARD_TASKS) == sample(before, SHARD_TASKS)


def test_a_step_whose_lrs_shrinks_and_re_expands_counts_both(client, redis_url):
    before = scrape(client)
    # No status event: the partition's LRS ended the step as it began.
    count_step([LrsChanged("t", 0, 0, (0, 1), 5), LrsChanged("t", 0, 0, (0, 1, 2), 5)], {})
    after = scrape(client)
    for name in ("controlroom_lrs_shrinks_total", "controlroom_lrs_expands_total"):
        assert sample(after, name) == sample(before, name) + 1, name


def test_replica_moves_are_counted_by_step_from_the_first_scrape(client, redis_url):
    samples = scrape(client)
    for step in ("started", "progressed", "completed", "rolled_back"):
        assert sample(samples, "controlroom_replica_moves_total", step=step) == 0
