"""A reassignment driven through the replication shell rewrites the store's replica map and logs its steps."""
from __future__ import annotations

import pytest

from cluster.core import replication as core
from cluster.models import Event, Partition, Topic
from cluster.services import topic_create
from cluster.engine.engine import current as engine
from tests.helpers import register_spus
from tests.integration.test_replication_shell import tick

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


@pytest.fixture
def topic(redis_url):
    register_spus(0, 1, 2, 3, online=True)
    topic_create(name="t", partitions=1, replication=2)
    tick()
    return Partition.objects.get(topic__name="t", index=0)


def reassign(target: list[int]) -> list[core.Action]:
    with engine().unit(whole=True, dispatch=lambda f: None) as u:
        u.actions += core.handle(u.state.state, core.ReassignPartition("t", 0, tuple(target)))
    return u.actions


def test_a_started_move_writes_the_union_of_old_and_new_replicas_to_the_store(topic):
    target = [s for s in (0, 1, 2, 3) if s not in topic.replicas][:2]
    reassign(target)
    row = Partition.objects.get(pk=topic.pk)
    assert row.replicas == topic.replicas + target
    assert Topic.objects.get(name="t").replica_map == [topic.replicas + target]
    assert Event.objects.filter(object_name="t/0", operation="move-start").count() == 1
    assert Event.objects.get(object_name="t/0", operation="replicas").params["adding"] == target


def test_a_completed_move_leaves_exactly_the_target_in_the_store_and_logs_it(topic):
    target = [s for s in (0, 1, 2, 3) if s not in topic.replicas][:2]
    reassign(target)
    for _ in range(6):
        tick()
    row = Partition.objects.get(pk=topic.pk)
    assert row.replicas == target and row.leader == target[0]
    assert Topic.objects.get(name="t").replica_map == [target]
    assert Event.objects.filter(object_name="t/0", operation="move-complete").count() == 1

