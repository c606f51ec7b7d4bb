"""The engine's work follows what changed: offsets rows at a bounded rate, sets kept decoded."""
from __future__ import annotations

import time

import pytest

from cluster.adapters import hot_state
from cluster.engine.engine import current as engine
from cluster.models import Partition
from cluster.services import topic_create
from cluster.services.outages import spu_offline
from cluster.services.records import topic_set_producer_rate
from cluster.services.replication import replication_tick
from cluster.services.waiting import LocalQueue
from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def tick(at: int) -> None:
    queue = LocalQueue()
    replication_tick(now=at, dispatch=queue)
    queue.drain()


def rows() -> dict[int, tuple]:
    return {p.index: (p.leader, tuple(p.lrs), p.hw, p.leo) for p in Partition.objects.all()}


def hot_rows() -> dict[int, tuple]:
    sets = hot_state.load().state.replica_sets
    return {k[1]: (rs.leader, tuple(rs.lrs), rs.hw, rs.leo) for k, rs in sets.items()}


@pytest.fixture
def busy(redis_url, settings):
    settings.REPLICATION_SIMULATED_PRODUCERS = True
    settings.REPLICATION_MIRROR_ROWS = 2  # 6 sets: three slices, one per tick
    register_spus(0, 1, 2, online=True)
    topic_create(name="busy", partitions=6, replication=3, min_lrs=2)
    at = int(time.time() * 1000)
    tick(at)
    topic_set_producer_rate(name="busy", rate=6)
    return at


def test_past_the_budget_offsets_rows_trail_by_at_most_one_round_of_slices(busy):
    at = busy
    for step in range(1, 4):
        tick(at + 1000 * step)
    assert rows() != hot_rows()  # some rows were not due this tick
    topic_set_producer_rate(name="busy", rate=0)
    for step in range(4, 8):  # the producers stop; every slice comes round once more
        tick(at + 1000 * step)
    assert rows() == hot_rows()


def test_past_the_budget_a_leader_change_reaches_the_store_at_once(busy):
    at = busy
    for step in range(1, 3):
        tick(at + 1000 * step)
    spu_offline(spu_id=0, by="test")
    tick(at + 3000)
    hot = hot_rows()
    assert {i: r[:2] for i, r in rows().items()} == {i: r[:2] for i, r in hot.items()}
    assert all(leader != 0 for leader, *_ in hot.values())


def test_a_set_another_writer_changed_is_decoded_not_taken_from_the_last_commit(busy):
    at = busy
    tick(at + 1000)
    kept = hot_state.load(committed=engine().sets).state.replica_sets[("busy", 0)]
    assert (kept.leader, tuple(kept.lrs), kept.hw, kept.leo) == hot_rows()[0]
    tick(at + 2000)
    with hot_state.locked() as held:  # another worker's unit: its own decoding, its save
        hot = hot_state.load()
        other = hot.state.replica_sets[("busy", 1)]
        other.epoch += 7
        hot_state.save(hot, held)
    again = hot_state.load(committed=engine().sets).state.replica_sets[("busy", 1)]
    assert again.epoch == other.epoch


def test_the_beat_heals_drifted_rows_at_most_once_per_interval(busy, settings):
    from cluster.services.replication import resync_heal_due

    settings.REPLICATION_RESYNC_INTERVAL_S = 60
    assert resync_heal_due() is True
    assert resync_heal_due() is False


def offsets() -> dict[int, tuple[int, int]]:
    return {p.index: (p.hw, p.leo) for p in Partition.objects.all()}


def test_past_the_budget_rows_whose_offsets_only_trail_are_left_to_the_mirror(busy):
    from cluster.services.replication import replication_resync_store

    at = busy
    for step in range(1, 4):
        tick(at + 1000 * step)
    assert offsets() != {i: (hw, leo) for i, (_, _, hw, leo) in hot_rows().items()}
    assert replication_resync_store() == 0  # no drift: the mirror's slices bring them level


def test_past_the_budget_offsets_ahead_of_the_hot_state_are_healed(busy):
    from cluster.services.replication import replication_resync_store

    tick(busy + 1000)
    Partition.objects.filter(index=4).update(hw=10_000, leo=10_000)
    assert replication_resync_store() == 1
    assert offsets()[4] == hot_rows()[4][2:]


def test_below_the_budget_a_row_whose_offsets_trail_is_healed(busy, settings):
    from cluster.services.replication import replication_resync_store

    settings.REPLICATION_MIRROR_ROWS = 2000  # every moved row is written at each tick
    for step in range(1, 4):
        tick(busy + 1000 * step)
    topic_set_producer_rate(name="busy", rate=0)
    tick(busy + 4000)
    assert rows() == hot_rows()
    index = max(offsets().items(), key=lambda item: item[1])[0]
    assert offsets()[index][0] > 0
    Partition.objects.filter(index=index).update(hw=0, leo=0)  # a mirror write lost, say
    assert replication_resync_store() == 1
    assert rows() == hot_rows()


def _first_tick_queries(count: int, at: int) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for i in range(count):
        topic_create(name=f"many-{count}-{i}", partitions=2, replication=2)
    with CaptureQueriesContext(connection) as queries:
        tick(at)
    return len(queries.captured_queries)


def test_a_tick_that_adds_many_topics_reads_the_store_a_query_per_kind_not_per_topic(
        redis_url):
    # Their partitions, reservations, counted rows and announced rows: one query each
    # however many topics (a query a topic was seconds of a restart at 10,000 topics).
    register_spus(0, 1, 2, online=True)
    at = int(time.time() * 1000)
    tick(at)
    few = _first_tick_queries(3, at + 1000)
    many = _first_tick_queries(30, at + 2000)
    assert set(hot_state.replicated_topics()) >= {f"many-30-{i}" for i in range(30)}
    assert many <= few + 5, (few, many)


def test_a_tick_that_changed_nothing_in_the_meta_writes_none_and_a_change_is_written(
        redis_url, monkeypatch, settings):
    from cluster.adapters import lease
    from cluster.adapters.redis_keys import key

    settings.REPLICATION_SIMULATED_PRODUCERS = False
    register_spus(0, 1, 2, online=True)
    topic_create(name="quiet", partitions=2, replication=2)
    topic_set_producer_rate(name="quiet", rate=3)
    at = int(time.time() * 1000)
    tick(at)  # compared with the rows: the rate adopted
    assert hot_state.load().topics["quiet"]["rate"] == 3
    # Not compared with the rows from here (that notes its time in the meta), as in a
    # running engine 9 ticks in 10. The simulated producers are off.
    settings.REPLICATION_TOPOLOGY_COMPARE_S = 60
    tick(at + 1000)
    tick(at + 1500)
    sent: list[str] = []
    real = lease.fenced_write

    def spy(held, ops, **kw):
        sent.extend(op.key for op in ops)
        return real(held, ops, **kw)

    monkeypatch.setattr(lease, "fenced_write", spy)
    tick(at + 2000)
    assert sent and key("meta") not in sent  # the tick saved, but not the same meta again
    assert key("meta:topics") not in sent
    settings.REPLICATION_SIMULATED_PRODUCERS = True
    sent.clear()
    tick(at + 3000)  # the producer's clock starts: a change, written
    assert key("meta") in sent
    assert key("meta:topics") not in sent  # the topics' key holds no producer's clock
    assert hot_state.load().producers["quiet"]["last_ms"] == at + 3000


class _Reads:
    """The hot state's client, noting every key its MGETs name (its pipelines' too)."""

    def __init__(self, real, keys=None) -> None:
        self.real, self.keys = real, [] if keys is None else keys

    def __getattr__(self, name):
        return getattr(self.real, name)

    def pipeline(self, *args, **kwargs):
        return _Reads(self.real.pipeline(*args, **kwargs), self.keys)

    def mget(self, *keys):
        self.keys.extend(keys)
        return self.real.mget(*keys)


def test_a_unit_after_this_processs_own_save_reads_no_topics_text_and_another_writer_is_read(
        redis_url, monkeypatch):
    from cluster.adapters import redis_keys
    from cluster.adapters.redis_keys import key

    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=2, replication=2)
    at = int(time.time() * 1000)
    tick(at)
    reads = _Reads(redis_keys.client())
    monkeypatch.setattr(hot_state, "client", lambda: reads)
    tick(at + 1000)
    assert key("meta") in reads.keys and key("meta:topics") not in reads.keys
    # Another process sets a topic (here: this one's kept parse forgotten, as a new process
    # has none): the text is read, with the small key, in one command.
    engine().sets.meta.parsed.clear()
    reads.keys.clear()
    tick(at + 2000)
    assert [key("meta"), key("meta:topics")] in [reads.keys[i:i + 2]
                                                 for i in range(len(reads.keys))]
    assert hot_state.load().topics["orders"]["partitions"]


def test_a_meta_of_one_key_left_by_an_older_version_is_read_and_saved_as_two(
        redis_url, settings):
    """A store whose Redis an older version wrote (the meta one key, the producers'
    accounting in the tables): the next tick reads it as it stands and writes both keys,
    nothing lost."""
    import json

    from cluster.adapters.redis_keys import bound_to_store, key

    settings.REPLICATION_SIMULATED_PRODUCERS = True
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=3, replication=2)
    topic_set_producer_rate(name="orders", rate=3)
    at = int(time.time() * 1000)
    tick(at)
    tick(at + 1000)
    before = hot_state.load()
    assert before.producers["orders"]["last_ms"] == at + 1000
    with bound_to_store():
        client = hot_state.client()
        small, topics = (json.loads(v) for v in client.mget(key("meta"), key("meta:topics")))
        core = {**small["core"], "topics": topics["configs"]}
        tables = {name: {**table, **small["producers"].get(name, {})}
                  for name, table in topics["tables"].items()}
        client.set(key("meta"), json.dumps({"core": core, "topics": tables,
                                            "checked": small["checked"],
                                            "racks": small["racks"],
                                            "adopted": small["adopted"]}))
        client.delete(key("meta:topics"))
    engine().sets.meta.parsed.clear()  # as a new version's process starts with none
    old = hot_state.load()
    assert old.topics == before.topics and old.producers == before.producers
    assert old.state.topics == before.state.topics
    tick(at + 2000)
    after = hot_state.load()
    assert after.producers["orders"]["last_ms"] == at + 2000
    assert after.topics == before.topics and "last_ms" not in after.topics["orders"]
    with bound_to_store():
        small = json.loads(hot_state.client().get(key("meta")))
        assert small["format"] == 2 and "topics" not in small["core"]
        assert hot_state.client().exists(key("meta:topics"))
    # Every set still there, each log where it was or further on (the producer ran on).
    sets, earlier = after.state.replica_sets, before.state.replica_sets
    assert sets.keys() == earlier.keys()
    assert all(sets[k].leo >= earlier[k].leo for k in sets)
    assert sum(rs.leo for rs in sets.values()) > sum(rs.leo for rs in earlier.values())


def test_a_reader_parses_the_topics_text_once_a_change(redis_url, monkeypatch):
    from cluster.adapters import redis_keys
    from cluster.adapters.redis_keys import key

    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=2, replication=2)
    at = int(time.time() * 1000)
    tick(at)
    assert hot_state.replicated_topics() == {"orders"}
    reads = _Reads(redis_keys.client())
    monkeypatch.setattr(hot_state, "client", lambda: reads)
    assert hot_state.replicated_topics() == {"orders"}
    assert hot_state.load(keys=[]).topics.keys() == {"orders"}
    # The small key (or its first bytes) named the text the process kept: not read again.
    assert key("meta:topics") not in reads.keys
    topic_create(name="audit", partitions=1, replication=2)
    tick(at + 1000)
    assert hot_state.replicated_topics() == {"orders", "audit"}
