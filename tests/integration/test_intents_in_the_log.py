"""Operator intents reach the metadata log when they are made, not when a tick adopts the
rows (issue 32): after `topic create`, with no worker running, `metadata dump` lists it."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from cluster.adapters import metadata_log
from cluster.adapters.redis_keys import client
from cluster.ports import bound_to_store
from cluster.models import Event, Topic
from cluster.projections import store as store_projection
from cluster.services import replication
from cluster.services.waiting import LocalQueue
from tests.helpers import register_spus
from webapp.redis_server import free_port

pytestmark = [pytest.mark.django_db(transaction=True)]


def dump() -> list[dict]:
    out = StringIO()
    call_command("metadata", "dump", "--json", stdout=out)
    return json.loads(out.getvalue())


def creates() -> list[dict]:
    return [e for e in dump() if e["type"] == "topic-create"]


@pytest.mark.redis
def test_topic_create_is_in_the_log_right_after_the_command_with_no_worker(redis_url):
    register_spus(0, 1, 2, online=True)
    call_command("topic", "create", "orders", "--partitions", "3", "--replication", "2",
                 "--min-lrs", "2", stdout=StringIO())
    [entry] = creates()
    # Logged before the row existed (the row is its projection): no row id in it.
    assert entry["topic"] == "orders" and "topic_pk" not in entry
    assert entry["by"] == "cli" and entry["log_first"] is True
    topic = Topic.objects.get()
    assert (topic.name, topic.min_lrs, len(topic.replica_map)) == ("orders", 2, 3)
    # Its row and its event row came from the entry: the event keeps the entry's offset.
    assert Event.objects.get(object_type="topic", operation="create").log_offset == (
        entry["offset"])
    assert entry["settings"]["partition_count"] == 3 and entry["settings"]["min_lrs"] == 2
    assert entry["offset"] >= 1 and entry["at"] > 0


@pytest.mark.redis
def test_a_refused_create_logs_no_intent(redis_url):
    register_spus(0, 1, online=True)
    call_command("topic", "create", "orders", "-p", "1", "-r", "2", stdout=StringIO())
    with pytest.raises(CommandError):
        call_command("topic", "create", "orders", "-p", "1", "-r", "2", stdout=StringIO(),
                     stderr=StringIO())
    with pytest.raises(CommandError):
        call_command("topic", "create", "empty", "-p", "0", "-r", "2", stdout=StringIO(),
                     stderr=StringIO())
    assert [e["topic"] for e in creates()] == ["orders"]


@pytest.mark.redis
def test_the_engine_adopts_the_topic_after_its_intent_and_the_store_passes_it_once(redis_url):
    register_spus(0, 1, 2, online=True)
    call_command("topic", "create", "orders", "-p", "2", "-r", "3", stdout=StringIO())
    events = Event.objects.count()
    replication.replication_tick(dispatch=LocalQueue())
    entries = dump()
    kinds = [e["type"] for e in entries]
    assert kinds.index("topic-create") < kinds.index("topic-replicated")
    intent = entries[kinds.index("topic-create")]
    assert store_projection.applied_offset() >= intent["offset"]
    # The intent is no event of its own: the service logged the create once already.
    assert Event.objects.filter(operation="create", object_type="topic").count() == 1
    assert Event.objects.count() >= events


@pytest.mark.redis
def test_an_intent_after_the_log_was_lost_comes_above_what_the_store_applied(redis_url):
    register_spus(0, 1, online=True)
    call_command("topic", "create", "orders", "-p", "2", "-r", "2", stdout=StringIO())
    replication.replication_tick(dispatch=LocalQueue())
    applied = store_projection.applied_offset()
    with bound_to_store():
        client().delete(metadata_log.head_key(), metadata_log.stream_key())
    call_command("topic", "create", "audit", "-p", "1", "-r", "2", stdout=StringIO())
    [entry] = creates()
    assert entry["topic"] == "audit" and entry["offset"] > applied


def test_with_redis_unreachable_a_create_is_still_stored(settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    register_spus(0, 1, online=True)
    call_command("topic", "create", "orders", "-p", "1", "-r", "2", stdout=StringIO())
    assert Topic.objects.filter(name="orders").exists()
