"""A unit of work after this process's own commit takes its sets whole from the set
cache without reading them from Redis; after anyone else's save of sets, after a Redis
that lost its keys, or after a failed unit, it reads and checks them again."""
from __future__ import annotations

import pytest

from cluster.adapters import hot_servers, hot_state, set_cache
from cluster.engine.engine import current as engine
from cluster.engine.engine import using
from cluster.services import topic_create
from cluster.services.records import records_produce
from cluster.services.replication import replication_tick
from cluster.services.waiting import LocalQueue
from tests.helpers import another_process, register_spus, sharded_over

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def tick(at: int) -> None:
    queue = LocalQueue()
    replication_tick(now=at, dispatch=queue)
    queue.drain()


class SetReads:
    """Counts the reads of set encodings (full and by key) the loads within make."""

    def __init__(self):
        self.calls: list[str] = []
        self.asked: list[list | None] = []  # each hmget's fields (the partitions read)
        self._patch = pytest.MonkeyPatch()

    def __enter__(self) -> "SetReads":
        real, calls, asked = hot_servers.client_of, self.calls, self.asked

        class Pipe:
            def __init__(self, pipe):
                self.pipe = pipe

            def __enter__(self):  # a fenced write's pipeline (lease.py) is entered
                self.pipe.__enter__()
                return self

            def __exit__(self, *exc):
                return self.pipe.__exit__(*exc)

            def __getattr__(self, name):
                read = getattr(self.pipe, name)
                if name not in ("hgetall", "hmget"):
                    return read

                def counted(hash_key, *args, **kwargs):
                    if ":sets:" in hash_key:  # the sets' statuses, not their rows
                        calls.append(name)
                        asked.append(list(args[0]) if name == "hmget" else None)
                    return read(hash_key, *args, **kwargs)
                return counted

        class Client:
            def __init__(self, server, socket_timeout=None):
                self.server, self.socket_timeout = server, socket_timeout

            def __getattr__(self, name):
                client = real(self.server, self.socket_timeout)
                if name == "pipeline":
                    return lambda **kw: Pipe(client.pipeline(**kw))
                return getattr(client, name)

        self._patch.setattr(hot_servers, "client_of", Client)
        return self

    def __exit__(self, *exc) -> None:
        self._patch.undo()


def decoded() -> dict:
    """The store's sets as a reader decodes them, to compare with what a unit took."""
    return {k: figures_of(rs) for k, rs in hot_state.load().state.replica_sets.items()}


def figures_of(rs) -> tuple:
    return (rs.leader, tuple(rs.lrs), rs.hw, rs.epoch,
            tuple((s, r.start, tuple(r.log), r.hw) for s, r in sorted(rs.replica.items())))


def taken(keys=None) -> tuple[dict, bool]:
    """What a unit of work's load takes (then puts back as committed, saving nothing new)."""
    seen = {}

    def step(hot):
        # A steady set's followers as the index keeps them (core.replication.steady).
        view = hot.state.steady.view
        seen.update({k: figures_of(view(rs)) for k, rs in hot.state.replica_sets.items()})
        seen["exact"] = hot.exact
        return []

    with engine().unit(keys=keys, whole=keys is None, dispatch=lambda followups: None) as u:
        step(u.state)
    exact = seen.pop("exact")
    return seen, exact


@pytest.fixture
def orders(redis_url, settings):
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=4, replication=3)
    tick(1_000)
    records_produce(topic="orders", partition=0, count=3)
    tick(2_000)
    return "orders"


def test_after_its_own_commit_a_unit_reads_no_set_and_takes_what_redis_holds(orders):
    with SetReads() as reads:
        sets, exact = taken()
    assert reads.calls == [] and exact
    assert sets == decoded()
    with SetReads() as reads:
        sets, _ = taken(keys=[(orders, 0), (orders, 2)])  # a unit of some sets: none read either
    assert reads.calls == [] and set(sets) == {(orders, 0), (orders, 2)}
    with SetReads() as reads:
        tick(3_000)  # and the whole image is still exact after it
    assert reads.calls == []


def test_after_another_workers_save_every_set_is_read_and_the_changed_one_decoded(orders):
    with hot_state.locked() as held:  # another worker: its own decoding, its own save
        hot = hot_state.load()
        hot.state.replica_sets[(orders, 1)].epoch += 7
        hot_state.save(hot, held)
    with SetReads() as reads:
        sets, exact = taken()
    assert reads.calls == ["hgetall"] and exact
    assert sets == decoded() and sets[(orders, 1)][3] == decoded()[(orders, 1)][3]
    with SetReads() as reads:
        taken()  # the unit's own commit made the image exact again
    assert reads.calls == []


def test_after_another_process_wrote_a_few_sets_only_those_are_read(orders):
    """Their saves noted what they wrote (set_cache ``written_since``): the next complete
    load takes the image whole but for those sets, read and decoded anew."""
    with using(another_process()):
        records_produce(topic=orders, partition=1, count=2)
        records_produce(topic=orders, partition=3, count=1)
    with SetReads() as reads:
        sets, exact = taken()
    assert reads.calls == ["hmget"] and exact
    assert sets == decoded()
    with SetReads() as reads:
        tick(3_000)  # the unit's own commit made the image exact again
    assert reads.calls == []
    assert taken()[0] == decoded()


def test_a_save_that_noted_nothing_sends_the_next_load_to_every_set(orders, monkeypatch):
    with using(another_process()):
        monkeypatch.setattr(set_cache, "NOTED_SETS", 0)  # a large save: no note
        records_produce(topic=orders, partition=1, count=2)
        monkeypatch.setattr(set_cache, "NOTED_SETS", 500)
        records_produce(topic=orders, partition=3, count=1)  # noted, but the way is broken
    with SetReads() as reads:
        sets, _ = taken()
    assert reads.calls == ["hgetall"] and sets == decoded()


def test_a_redis_that_lost_its_generation_is_read_again(orders):
    with hot_state.bound_to_store():
        hot_state.client().delete(set_cache.generation_key(hot_state.key("lock")))
    with SetReads() as reads:
        sets, _ = taken()
    assert reads.calls == ["hgetall"] and sets == decoded()


def test_some_sets_read_after_another_save_leave_the_rest_unchecked(orders):
    with hot_state.locked() as held:
        hot = hot_state.load()
        hot.state.replica_sets[(orders, 3)].epoch += 5
        hot_state.save(hot, held)
    with SetReads() as reads:
        taken(keys=[(orders, 0)])  # set 3 was not read: the image can no longer be trusted
        sets, _ = taken()
    assert reads.calls == ["hmget", "hgetall"]
    assert sets[(orders, 3)] == decoded()[(orders, 3)]


def test_a_unit_that_fails_leaves_nothing_to_take(orders):
    def broken(hot):
        hot.state.replica_sets[(orders, 0)].epoch += 100
        raise RuntimeError("half-way")

    with pytest.raises(RuntimeError):
        with engine().unit(whole=True, dispatch=lambda followups: None) as u:
            broken(u.state)
    with SetReads() as reads:
        sets, _ = taken()
    assert reads.calls == ["hgetall"] and sets == decoded()
    assert sets[(orders, 0)][3] < 100


SHARDS = 4


@pytest.fixture(params=["one-redis", "two-redis"])
def sharded(request, redis_url, settings, monkeypatch):
    sharded_over(request, settings, monkeypatch, SHARDS)  # 16 partitions over 4 shards
    register_spus(0, 1, 2, 3, online=True)
    topic_create(name="orders", partitions=16, replication=3)
    tick(1_000)  # the whole unit: every lease
    return "orders"


def shard_unit(shard: int) -> tuple[dict, bool]:
    """One shard's unit of work, as its tick runs it (every set of the shard)."""
    seen = {}

    def step(hot):
        seen.update({k: figures_of(rs) for k, rs in hot.state.replica_sets.items()})
        seen["exact"] = hot.exact
        return []

    with engine().unit(shard=shard, dispatch=lambda followups: None) as u:
        step(u.state)
    return seen, seen.pop("exact")


def test_a_shard_reads_its_sets_once_then_takes_them_whole_whatever_other_shards_write(
        sharded):
    with SetReads() as reads:
        first, exact = shard_unit(0)  # the whole unit's image is not the shard's: read once
    assert reads.calls == ["hmget"] and exact and first
    shard_unit(1)  # another shard's save writes its own lease's generation only
    with SetReads() as reads:
        again, exact = shard_unit(0)
    assert reads.calls == [] and exact
    assert again == {k: v for k, v in decoded().items() if k in first}


def test_a_whole_unit_after_a_shards_save_reads_every_set_again(sharded):
    from cluster.adapters import hot_servers

    shard_unit(2)  # after the fixture's whole unit
    with SetReads() as reads:
        sets, exact = taken()  # it holds every lease, shard 2's generation moved
    # one read of the topic per server holding its sets
    assert reads.calls == ["hgetall"] * len(hot_servers.servers()) and exact and sets == decoded()
    with SetReads() as reads:
        again, exact = shard_unit(2)  # the whole unit moved every lease's generation ...
    # ... and noted, for each shard, that it wrote none of its sets (hot_save._noted), on
    # the shard's own server when spread: the shard takes its image whole.
    assert reads.calls == [] and exact
    assert again == {k: v for k, v in decoded().items() if k in again}


def test_a_shard_after_a_whole_unit_wrote_some_of_its_sets_reads_those_alone(sharded):
    """A holder of every lease (an SPU's change adopted on its sets alone) writes a few of a
    shard's sets: the shard's next unit reads those, and takes the rest from its image."""

    first, _ = shard_unit(1)
    keys = shard_unit_keys(1)
    with engine().unit(whole=True, pick=lambda _: keys[:2],
                       dispatch=lambda followups: None) as u:
        for set_key in keys[:2]:
            u.state.state.replica_sets[set_key].epoch += 7
    with SetReads() as reads:
        again, exact = shard_unit(1)
    assert reads.calls == ["hmget"] and exact
    assert again == {k: v for k, v in decoded().items() if k in first}
    assert all(again[k][3] == first[k][3] + 7 for k in keys[:2])  # (figures: epoch 4th)
    # Those two alone, on one server or spread (in any order: the notes name a set).
    assert [sorted(asked) for asked in reads.asked] == [sorted(str(p) for _, p in keys[:2])]


def test_a_save_under_the_whole_states_lease_alone_moves_every_shards_generation(sharded):
    shard_unit(3)
    with hot_state.locked() as held:  # the cluster lease only, yet it may write any set
        hot = hot_state.load()
        shard_3 = shard_unit_keys(3)
        hot.state.replica_sets[shard_3[0]].epoch += 9
        hot_state.save(hot, held)
    with SetReads() as reads:
        sets, _ = shard_unit(3)
    assert reads.calls == ["hmget"]
    assert sets[shard_3[0]] == decoded()[shard_3[0]]


def shard_unit_keys(shard: int) -> list:
    from cluster.adapters import shards

    return shards.keys_of_shard(hot_state.load().topics, shard, SHARDS)


def test_sets_another_process_deleted_leave_this_process_s_steady_index(orders):
    """Another worker deletes the topic and creates another of as many partitions: this
    process's next complete load keeps no steady mark of the deleted sets. A stale mark
    once counted as a steady set, so the new sets were in neither the index nor its list
    of the others: no round, election scan or save of this process visited them."""
    from cluster.services.topics import topic_delete

    tick(3_000)  # the orders' sets steady in this process's image
    with using(another_process()):
        topic_delete(name=orders)
        tick(4_000)
        topic_create(name="payments", partitions=4, replication=3)
        tick(5_000)
    tick(6_000)
    seen = {}
    with engine().unit(whole=True, dispatch=lambda followups: None) as u:
        state = u.state.state
        seen["loaded"] = set(state.replica_sets)
        seen["steady"] = set(state.steady.keys)
        seen["others"] = set(state.steady.unsteady_keys(state.replica_sets))
    assert seen["loaded"] == {("payments", p) for p in range(4)}
    assert seen["steady"] | seen["others"] == seen["loaded"]
    assert not seen["steady"] & seen["others"]


def test_a_topic_made_again_is_saved_as_made_not_as_the_image_s_old_steady_sets(sharded):
    """Found by the set cache campaign: a topic dropped and made again by units of no set
    (each alone under every lease) left the old sets' entries in this process's image's
    steady index, with their encodings' templates; the next whole unit took the new sets by
    their bytes, kept them steady under the old entries, and saved the old replicas."""
    from cluster.services import replication, topic_delete
    from cluster.services.topics import topic_create as create

    def coordinated():
        queue = LocalQueue()
        work = replication.replication_coordinate(dispatch=queue)
        for shard, quotas in (work or {}).items():
            replication.replication_shard_tick(shard, quotas=quotas, dispatch=queue)

    create(name="extra", partitions=6, replication=2)
    coordinated()  # made alone
    for _ in range(3):  # whole ticks: the image's index holds its sets, steady
        tick(None)
    first = {k: list(rs.replicas) for k, rs in decoded_sets().items() if k[0] == "extra"}
    topic_delete(name="extra")
    coordinated()  # dropped alone
    create(name="extra", partitions=6, replication=2)
    coordinated()  # made alone again, elsewhere
    made = {k: list(rs.replicas) for k, rs in decoded_sets().items() if k[0] == "extra"}
    assert made != first  # (the assignment's cursor moved on)
    tick(None)  # a whole unit, taking the sets by their bytes
    assert {k: list(rs.replicas) for k, rs in decoded_sets().items() if k[0] == "extra"} == made


def decoded_sets() -> dict:
    with using(another_process()):
        return hot_state.load().state.replica_sets
