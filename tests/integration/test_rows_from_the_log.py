"""The log first (issue 32): an operator's command appends its intent entry, and the
store's rows and event rows are the projection of that entry; a refused command logs and
writes nothing; the rows can be rebuilt from the log alone."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from cluster.adapters import metadata_log
from cluster.ports import bound_to_store
from cluster.core.replication import intents
from cluster.models import ClusterState, Event, Partition, Spu, Topic, TopicSpuCount
from cluster.projections import store as store_projection
from tests.helpers import log_dumped as dumped, log_head as head
from tests.helpers import run, store_counts

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]


def last_intent() -> dict:
    return [e for e in dumped() if e["type"] in intents.KINDS][-1]


def rows() -> dict[str, list]:
    """What the store holds that commands write, the heartbeat's time aside."""
    return {
        "spus": list(Spu.objects.order_by("id").values_list(
            "id", "spu_type", "rack", "public_endpoint", "private_endpoint", "resolution")),
        "topics": list(Topic.objects.order_by("name").values_list(
            "name", "partitions", "replication_factor", "min_lrs", "max_lag", "resolution",
            "reason", "replica_map", "assignment_start", "producer_rate")),
        "partitions": list(Partition.objects.order_by("topic__name", "index").values_list(
            "topic__name", "index", "replicas", "leader", "lrs", "resolution")),
        "events": list(Event.objects.exclude(log_offset=None).order_by("log_offset", "id")
                       .values_list("log_offset", "actor", "object_type", "object_name",
                                    "operation", "params", "result")),
        "cursor": [ClusterState.objects.get(pk=ClusterState.SINGLETON).assignment_cursor],
    }


def commands() -> None:
    for spu, rack in ((1, "a"), (2, "a"), (3, "b")):
        run("spu", "register", "--id", str(spu), "--rack", rack)
    run("spu", "update", "3", "--rack", "c")
    run("rack", "online", "a")
    run("rack", "online", "c")
    run("topic", "create", "t", "-p", "3", "-r", "2", "--min-lrs", "2")
    run("topic", "create", "waits", "-p", "1", "-r", "4")  # too few SPUs: no partitions
    run("spu", "register", "--id", "4", "--rack", "c")  # the controller provisions it
    run("rack", "offline", "a", "--no-wait")


def test_each_command_s_rows_and_event_come_from_its_entry_with_no_worker(redis_url):
    for command, kind, check in (
            (("spu", "register", "--id", "1", "--rack", "a"), "spu-register",
             lambda: Spu.objects.get(pk=1).rack == "a"),
            (("spu", "update", "1", "--rack", "b"), "spu-update",
             lambda: Spu.objects.get(pk=1).rack == "b"),
            (("rack", "offline", "b", "--no-wait"), "outage",
             lambda: Spu.objects.get(pk=1).resolution == "Offline"),
            (("topic", "create", "t", "-p", "2", "-r", "1"), "topic-create",
             lambda: Partition.objects.filter(topic__name="t").count() == 2)):
        before = head()
        run(*command)
        entry = next(e for e in dumped() if e["offset"] > before and e["type"] in intents.KINDS)
        assert (entry["type"], entry["by"], entry["log_first"]) == (kind, "cli", True)
        assert check()
        # The store applied it, and the command's event row is the entry's.
        assert store_projection.applied_offset() >= entry["offset"]
        assert Event.objects.filter(log_offset=entry["offset"], actor="cli").exists()


def test_a_refused_command_logs_nothing_and_writes_nothing(redis_url):
    run("spu", "register", "--id", "1", "--rack", "a")
    run("topic", "create", "t", "-p", "1", "-r", "1")
    mark, counts, events = head(), store_counts(), Event.objects.count()
    for command in (("spu", "register", "--id", "-1"),
                    ("spu", "register", "--id", "2", "--rack", "no spaces please"),
                    ("spu", "update", "1", "--public", "no port"),
                    ("rack", "offline", "nowhere"),
                    ("topic", "create", "bad", "-p", "0", "-r", "1"),
                    ("topic", "create", "bad", "-p", "1", "-r", "1", "--min-lrs", "2"),
                    ("topic", "create", "t", "-p", "1", "-r", "1"),
                    ("topic", "delete", "nothing")):
        with pytest.raises(CommandError):
            call_command(*command, stdout=StringIO(), stderr=StringIO())
    assert head() == mark
    assert store_counts() == counts and Event.objects.count() == events
    assert Spu.objects.get(pk=1).rack == "a"


def test_the_rows_are_rebuilt_from_the_log_alone(redis_url):
    commands()
    before = rows()
    assert before["partitions"] and before["events"]
    assert [p[0] for p in before["partitions"]].count("waits") == 1
    # Lose what the commands wrote (the topics' rows keep only their names and ids, which
    # the engine's entries name), and where the store had got to in the log.
    Spu.objects.all().delete()
    Partition.objects.all().delete()
    TopicSpuCount.objects.all().delete()
    Topic.objects.update(resolution="Init", reason="", replica_map=[], min_lrs=1,
                         assignment_start=None, producer_rate=0)
    Event.objects.all().delete()
    ClusterState.objects.filter(pk=ClusterState.SINGLETON).update(
        applied_offset=0, assignment_cursor=0)
    store_projection.catch_up()
    assert rows() == before
    # Applying the log a second time changes nothing (idempotent by entry).
    ClusterState.objects.filter(pk=ClusterState.SINGLETON).update(applied_offset=0)
    store_projection.catch_up()
    assert rows() == before


def test_an_entry_whose_writer_died_before_its_rows_is_written_by_the_next_catch_up(
        redis_url):
    run("spu", "register", "--id", "1")
    entry = {**intents.spu_register(7, "r", "h:1", "h:2"), "by": "cli", "log_first": True}
    with bound_to_store():
        offset = metadata_log.append_intent(entry, floor=store_projection.applied_offset())
    assert not Spu.objects.filter(pk=7).exists()  # the command died here
    store_projection.catch_up()
    assert Spu.objects.get(pk=7).rack == "r"
    assert Event.objects.get(log_offset=offset).operation == "register"


def test_a_unit_s_own_entries_are_applied_as_logged_and_equal_the_log_s(redis_url,
                                                                         monkeypatch):
    """The engine's unit hands its catch-up the entries it appended (not read back from the
    log: 8,000 of a failover at 100,000 partitions cost 0.13 s to decode); the rows and
    events they make are the ones the log's own entries make."""
    from cluster.services.replication import replication_tick
    from cluster.services.waiting import LocalQueue

    commands()
    replication_tick(dispatch=LocalQueue())
    read: list[int] = []
    real = metadata_log.read

    def spied(first, *args, **kwargs):
        found = real(first, *args, **kwargs)
        read.extend(e.offset for e in found)
        return found

    monkeypatch.setattr(store_projection.metadata_log, "read", spied)
    mark = head()
    run("rack", "offline", "c")  # SPUs 3 and 4: their unit elects, logs and projects
    replication_tick(dispatch=LocalQueue())
    monkeypatch.undo()
    logged = [e["offset"] for e in dumped() if e["offset"] > mark and e["type"] == "partition"]
    assert len(logged) > 0 and not set(read) & set(logged)
    before = rows()
    assert [e for e in before["events"] if e[0] in logged]
    Event.objects.all().delete()
    Partition.objects.update(leader=None, lrs=[], resolution="Offline")
    ClusterState.objects.filter(pk=ClusterState.SINGLETON).update(applied_offset=0)
    store_projection.catch_up()
    assert rows() == before
