"""The metadata log: one ordered truth the store, the event page and recovery are built from.

Each of issue 18's defects in the glue between Redis, the store and Celery
messages has a test here that fails on the code before the log.
"""
from __future__ import annotations

import json
import os
import signal
from io import StringIO

import pytest
from django.core.management import call_command

from cluster.adapters import hot_state
from cluster.ports import bound_to_store
from cluster.core import replication as core
from cluster.core.replication import Resolution, metadata
from cluster.models import ClusterState, Event, Partition, Topic
from cluster.projections import store as store_projection
from cluster.services import topic_create
from cluster.engine.engine import current as engine
from cluster.services.replication import now_ms, replication_tick
from tests.helpers import register_spus
from webapp.redis_server import start_private_redis

pytestmark = [pytest.mark.django_db, pytest.mark.redis, pytest.mark.timeout(180)]


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def run_json(*args: str) -> object:
    return json.loads(run(*args, "--json"))


def dump(first: int = 0) -> list[dict]:
    return run_json("metadata", "dump", "--from", str(first))


def lost(_followups) -> None:
    """A dispatcher whose messages never arrive: a worker died holding them."""


@pytest.fixture
def restartable_redis(tmp_path, settings):
    """A private redis-server with an append-only file that a test can SIGKILL and restart."""
    data = tmp_path / "redis"
    proc, url = start_private_redis(data)
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    settings.REDIS_URL = url
    settings.LIVE_UPDATES = False
    box = {"proc": proc}

    def restart() -> None:
        os.kill(box["proc"].pid, signal.SIGKILL)
        box["proc"].wait(10)
        box["proc"], _ = start_private_redis(data, port)

    yield restart
    box["proc"].terminate()
    box["proc"].wait(10)


def test_an_unclean_election_then_a_redis_restart_keeps_every_record(restartable_redis):
    """Defect 1: the store's HW "only advanced", so after an unclean election lowered it
    a Redis restart on an intact append-only file was "restored" at the old HW and the
    acknowledged records 0-4 were compacted away (consume returned [])."""
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "pay", "-p", "1", "-r", "3", "--min-lrs", "2")
    acked = run_json("produce", "pay", "--count", "5", "--acks", "all")
    assert acked["state"] == "acknowledged"
    leader = Partition.objects.get().leader
    others = [s for s in (0, 1, 2) if s != leader]
    for spu in others:
        run("spu", "offline", str(spu))
    run("produce", "pay", "--count", "4", "--acks", "1")
    run("spu", "offline", str(leader))
    run("spu", "online", str(others[0]))
    unclean = run_json("leader", "elect", "--unclean", "--topic", "pay", "--partition", "0")
    assert unclean["new_hw"] == 5 and unclean["old_hw"] == 9
    for spu in (leader, others[1]):
        run("spu", "online", str(spu))
    assert Partition.objects.get().hw == 5  # the lower HW is the store's figure too
    restartable_redis()
    run("produce", "pay", "--count", "1", "--acks", "1")  # any command that steps
    records = run_json("consume", "pay")
    assert [r["offset"] for r in records][:5] == [0, 1, 2, 3, 4]
    assert not Event.objects.filter(operation="hot-state-lost").exists()
    entry = next(e for e in dump() if e["type"] == "unclean-election")
    assert entry["given_up"] == [5, 9] and entry["offsets_lost"] == 4


@pytest.fixture
def trio(redis_url, settings):
    settings.REPLICATION_ELECTION_TIMEOUT_MS = 300
    register_spus(0, 1, 2, online=True)
    topic_create(name="t", partitions=6, replication=3)
    replication_tick(dispatch=lost)


def test_a_lost_timer_message_never_strands_an_election(trio):
    """Defect 2: timers were Celery countdown tasks; a worker killed holding one left the
    partition CandidateFound until the visibility timeout, as reconcile retried only
    Offline sets. Now the deadline is state: the next tick after it fires the timer."""
    sets = hot_state.load().state.replica_sets
    led_by_0 = [k for k, rs in sets.items() if rs.leader == 0]
    candidate = {k: core.choose_candidate(sets[k], {0: False, 1: True, 2: True})
                 for k in led_by_0}
    stuck = candidate[led_by_0[0]]
    with bound_to_store():
        hot_state.kill(stuck)  # that candidate's loop is stopped: it answers nothing
    at = now_ms()
    with engine().unit(whole=True, dispatch=lost, now=at) as u:
        u.actions += core.handle(u.state.state, core.SpuOffline(0))
    waiting = hot_state.load().state.replica_sets
    led_by_0 = [k for k in led_by_0 if candidate[k] == stuck]
    assert all(waiting[k].resolution is Resolution.CANDIDATE_FOUND for k in led_by_0)
    assert all(waiting[k].deadline_ms == at + 300 for k in led_by_0)
    replication_tick(dispatch=lost, now=at + 200)  # before the deadline: still waiting
    assert hot_state.load().state.replica_sets[led_by_0[0]].candidate == stuck
    replication_tick(dispatch=lost, now=at + 301)  # the beat's tick, no timer message
    done = hot_state.load().state.replica_sets
    assert all(done[k].resolution is Resolution.ONLINE for k in led_by_0)
    assert all(done[k].leader not in (0, stuck) for k in led_by_0)
    elections = [e for e in dump() if e["type"] == "election"]
    assert {(e["topic"], e["partition"]) for e in elections} >= set(led_by_0)


def test_a_moved_partition_has_its_preferred_leader_follow_its_replicas(redis_url):
    """Defect 4: after a move the stored preferred leader kept the old first replica."""
    register_spus(0, 1, 2, 3, online=True)
    topic_create(name="orders", partitions=1, replication=3)
    replication_tick(dispatch=lost)
    row = Partition.objects.get()
    target = tuple([3] + [s for s in row.replicas if s != row.replicas[0]])
    with engine().unit(whole=True, dispatch=lost) as u:
        u.actions += core.handle(u.state.state, core.ReassignPartition(
            "orders", 0, target, elect_preferred=True, now_ms=now_ms()))
    for _ in range(20):
        replication_tick(dispatch=lost)
        if list(Partition.objects.get().replicas) == list(target):
            break
    row = Partition.objects.get()
    assert list(row.replicas) == list(target)
    assert row.initial_leader == 3 == row.leader
    assert Topic.objects.get().replica_map == [list(target)]


def test_every_entry_has_a_strictly_increasing_offset_a_type_and_a_time(trio):
    run("spu", "offline", "1")
    run("spu", "online", "1")
    entries = dump()
    offsets = [e["offset"] for e in entries]
    assert offsets == sorted(set(offsets)) and all(isinstance(o, int) for o in offsets)
    assert all(isinstance(e["type"], str) and isinstance(e["at"], int) for e in entries)
    kinds = {e["type"] for e in entries}
    assert {"topic-replicated", "partition", "spu-sync"} <= kinds
    assert dump(offsets[-1]) == entries[-1:]
    assert store_projection.applied_offset() == offsets[-1]


def test_a_new_topics_statuses_are_stored_packed_and_an_older_entry_is_read_as_logged(trio):
    """A topic-replicated entry holds its statuses packed in Redis (a quarter of the bytes
    its one append holds Redis for); every reader gets them whole, from either form."""
    from cluster.adapters import metadata_log

    with bound_to_store():
        raw = [json.loads(text) for _, text in metadata_log.read_raw(0)
               if b'"topic-replicated"' in text]
        old = {"type": "topic-replicated", "topic": "old", "at": 1,
               "statuses": [[[0, 1, 2], 0, [0, 1, 2], "Online", 1]]}
        at = metadata_log.append_now([old], floor=0)[0]
    assert [(e["statuses"], type(e["packed"])) for e in raw] == [([], str)]
    logged = next(e for e in dump() if e["type"] == "topic-replicated")
    rows = {p.index: [p.replicas, p.leader, p.lrs, p.resolution, p.epoch]
            for p in Partition.objects.filter(topic__name="t")}
    assert dict(enumerate(logged["statuses"])) == rows and "packed" not in logged
    assert dump(at) == [{"offset": at, **old}]


def test_the_store_rows_are_the_replay_of_the_log(trio):
    """Replaying the log from offset 0 into emptied rows gives the live rows back."""
    run("spu", "offline", "0")
    run("spu", "offline", "1")
    run("spu", "online", "0")
    run("spu", "online", "1")
    columns = ("replicas", "initial_leader", "leader", "lrs", "resolution", "epoch")
    live = sorted(Partition.objects.values_list("index", *columns))
    events = sorted(Event.objects.filter(log_offset__isnull=False)
                    .values_list("log_offset", "operation", "object_name"))
    statuses: dict = {}
    for entry in dump():
        metadata.fold(statuses, entry)
    assert {k[1]: metadata.status_fields(v) for k, v in statuses.items()} == {
        index: {"replicas": replicas, "leader": leader, "lrs": lrs, "resolution": resolution,
                "epoch": epoch}
        for index, replicas, _, leader, lrs, resolution, epoch in live}
    Partition.objects.update(replicas=[9], initial_leader=9, leader=None, lrs=[],
                             resolution="Offline", epoch=0)
    Event.objects.filter(log_offset__isnull=False).delete()
    ClusterState.objects.update(applied_offset=0)
    store_projection.catch_up()
    assert sorted(Partition.objects.values_list("index", *columns)) == live
    assert sorted(Event.objects.filter(log_offset__isnull=False)
                  .values_list("log_offset", "operation", "object_name")) == events


def test_a_store_behind_the_log_catches_up_at_the_next_unit_of_work(trio):
    """A process killed between its commit and its projection leaves nothing missing."""
    head = json.loads(run("metadata", "dump", "--json"))[-1]["offset"]
    ClusterState.objects.update(applied_offset=0)
    Partition.objects.update(leader=None)
    replication_tick(dispatch=lost)
    assert store_projection.applied_offset() >= head
    assert not Partition.objects.filter(leader=None).exists()


def test_a_redis_behind_the_store_reports_what_it_lost_once(trio):
    """A Redis restored from an older append-only file: its log ends below the store's."""
    run("produce", "t", "--partition", "0", "--count", "3", "--acks", "all")
    applied = store_projection.applied_offset()
    # The store saw more than Redis kept (its reservation too: the floor a loss restores).
    Partition.objects.filter(index=0).update(hw=8, leo=8, reserved_to=8)
    ClusterState.objects.update(applied_offset=applied + 50)
    meta = json.loads(hot_state.client().get(hot_state.META))
    meta["checked"] = "an earlier Redis run"
    hot_state.client().set(hot_state.META, json.dumps(meta))
    replication_tick(dispatch=lost)
    replication_tick(dispatch=lost)
    event = Event.objects.get(operation="hot-state-lost")
    assert (event.params["missing_records"], event.params["partitions"]) == (5, {"0": 5})
    assert Partition.objects.get(index=0).hw == 8
    assert [e["offset"] for e in dump(applied + 1)][0] > applied + 50


def test_the_api_serves_the_log_to_viewers_and_refuses_a_bad_offset(trio, viewer_client):
    answer = viewer_client.get("/api/metadata/?from=0&limit=5")
    assert answer.status_code == 200
    body = answer.json()
    assert len(body["entries"]) == 5 and body["head"] >= body["entries"][-1]["offset"]
    assert body["next"] == body["entries"][-1]["offset"] + 1
    bad = viewer_client.get("/api/metadata/?from=-3")
    assert bad.status_code == 400 and "from" in bad.json()["error"]


def test_the_dump_command_refuses_a_bad_offset_with_exit_2(trio):
    from django.core.management.base import CommandError
    with pytest.raises(CommandError) as refused:
        call_command("metadata", "dump", "--from", "minus-one", stdout=StringIO())
    assert refused.value.returncode == 2 and "--from" in str(refused.value)


def test_the_log_is_trimmed_below_what_the_store_applied(trio, settings):
    from cluster.adapters import metadata_log
    from cluster.services.replication import replication_resync_store

    for _ in range(3):
        run("spu", "offline", "2")
        run("spu", "online", "2")
    with bound_to_store():
        head = metadata_log.head()
        assert metadata_log.trim(store_projection.applied_offset(), retention=5) > 0
        start = metadata_log.start()
    # The newest five kept, and the rest of the unit's entries the fifth came with.
    assert 1 < start <= head - 4
    assert [e["offset"] for e in dump()] == list(range(start, head + 1))
    replication_resync_store()  # the beat trims too, never past what the store applied
    assert dump()[0]["offset"] == start


def test_a_drifted_preferred_leader_is_healed_by_the_reconcile_beat(trio):
    """Defect 4 in a store written before the log: preferred leader 4 on replicas [1, 2, 0]."""
    from cluster.services.replication import replication_resync_store

    row = Partition.objects.get(index=1)
    Partition.objects.filter(pk=row.pk).update(initial_leader=4)
    assert replication_resync_store() == 1
    assert Partition.objects.get(pk=row.pk).initial_leader == row.replicas[0]
    assert replication_resync_store() == 0
