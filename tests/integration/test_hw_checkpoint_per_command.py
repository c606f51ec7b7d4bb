"""A command that changes no offsets appends no ``hw`` checkpoint (issue 36 item 7): each
``manage.py`` run, a fresh process, used to write its own copy of every partition's HW."""
from __future__ import annotations

import pytest

from cluster.adapters import metadata_log
from cluster.ports import bound_to_store
from cluster.core.replication.steady import Steady
from cluster.engine.engine import current as engine
from history import checkpoints
from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis, pytest.mark.timeout(120)]


def entries_since(offset: int) -> list[dict]:
    with bound_to_store():
        return [e.as_json() for e in metadata_log.read(offset + 1, 1000)]


def head() -> int:
    with bound_to_store():
        return metadata_log.head()


def fresh_process() -> None:
    """What a new ``manage.py`` process starts without: the checkpoints' memory, the set cache."""
    checkpoints.forget()
    engine().sets.clear()


@pytest.fixture
def produced(redis_url):
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "pay", "-p", "4", "-r", "3")
    run("produce", "pay", "--partition", "0", "--count", "5", "--acks", "all")
    run("produce", "pay", "--partition", "1", "--count", "5", "--acks", "all")


@pytest.mark.parametrize("commands", [
    [("spu", "list"), ("topic", "list"), ("partition", "list")],
    [("spu", "register", "--id", "9"), ("spu", "online", "9"), ("spu", "offline", "9"),
     ("spu", "online", "9"), ("topic", "create", "other", "-p", "1", "-r", "1"),
     ("leader", "elect", "--preferred")]])
def test_a_fresh_process_that_moves_no_hw_writes_no_hw_entry(produced, commands):
    start = head()
    for command in commands:
        fresh_process()
        run(*command)
    assert [e for e in entries_since(start) if e["type"] == "hw"] == []


def test_a_command_that_moves_a_hw_still_checkpoints_it(produced):
    start = head()
    fresh_process()
    run("produce", "pay", "--partition", "1", "--count", "3", "--acks", "all")
    hw = [e for e in entries_since(start) if e["type"] == "hw"]
    assert hw and any("pay" in str(e) for e in hw)


def _summary(hw: int):
    from cluster.adapters.set_codec import Summary
    from cluster.core.replication import Resolution

    return Summary(0, (0, 1), Resolution.ONLINE, hw, hw, ((0, hw, hw), (1, hw, hw)))


def test_a_fresh_process_checkpoints_only_the_sets_its_unit_moved(monkeypatch, settings):
    """The hook itself: a unit saved two sets (a busy tick saves every set), one of which
    moved; a fresh process writes that one, not its own copy of both."""
    from types import SimpleNamespace

    monkeypatch.setattr(metadata_log, "head", lambda: 40)
    monkeypatch.setattr(metadata_log, "stream_key", lambda: "log")
    settings.HISTORY_HW_INTERVAL_S = 300
    after = {("pay", 0): _summary(7), ("pay", 1): _summary(9)}
    hot = SimpleNamespace(differs=[("pay", 1)], moved=[],
                          state=SimpleNamespace(replica_sets={}, steady=Steady()))
    fresh = checkpoints.HwCheckpoints()  # a fresh process's
    (entry,) = fresh(hot, after, at=1_000_000, writes_entries=False)
    from cluster.core.replication.hw_codec import unpack

    assert [row[:2] for row in unpack(entry["topics"]["pay"])] == [(1, 9)]
    # The next unit of the same process, nothing moved: nothing written.
    hot.differs = []
    assert fresh(hot, after, at=1_000_001, writes_entries=True) == []


def _busy_hook(monkeypatch, settings, partitions: int):
    """A fresh checkpointer over ``partitions`` partitions of "pay", every one of them
    moving at every unit (the unit's ``differs``), an interval of 300 s, the log stubbed."""
    from types import SimpleNamespace

    monkeypatch.setattr(metadata_log, "head", lambda: 40)
    monkeypatch.setattr(metadata_log, "stream_key", lambda: "log")
    settings.HISTORY_HW_INTERVAL_S = 300
    keys = [("pay", p) for p in range(partitions)]
    hot = SimpleNamespace(differs=keys, moved=[], topics={"pay": {"partitions": keys}},
                          state=SimpleNamespace(replica_sets=dict.fromkeys(keys),
                                                steady=Steady()))
    return keys, checkpoints.HwCheckpoints(), hot


def test_a_busy_clusters_checkpoint_is_spread_over_the_interval(monkeypatch, settings):
    """Every partition moves at every unit, a unit a second: after the first unit (a fresh
    process's: every partition), each writes the partitions of the slot whose turn came,
    a fiftieth of them; over any interval every partition is written, so a moment's HW
    is at most one interval old. Written all at once, the checkpoint was a whole
    cluster's summaries at one tick every interval."""
    from cluster.core.replication.hw_codec import unpack

    keys, hook, hot = _busy_hook(monkeypatch, settings, 1_000)
    last: dict[int, int] = {}
    sizes = []
    for second in range(1_000, 1_000 + 2 * 300 + 1):
        at = second * 1000
        after = {k: _summary(second) for k in keys}
        written = hook(hot, after, at=at, writes_entries=False)
        rows = [row for e in written for row in unpack(e["topics"]["pay"])]
        assert all(hw == second for _, hw, *_ in rows)
        sizes.append(len(rows))
        for partition, *_ in rows:
            if partition in last:
                assert at - last[partition] <= 300_000, (partition, second)
            last[partition] = at
    assert sizes[0] == 1_000 and max(sizes[1:]) == 1_000 // checkpoints.SLOTS
    assert len(last) == 1_000 and min(last.values()) >= (1_000 + 300) * 1000


def test_a_checkpointer_behind_by_an_interval_writes_every_partition_at_once(monkeypatch,
                                                                           settings):
    from cluster.core.replication.hw_codec import unpack

    keys, hook, hot = _busy_hook(monkeypatch, settings, 200)

    def written(second: int) -> int:
        out = hook(hot, {k: _summary(second) for k in keys}, at=second * 1000,
                   writes_entries=False)
        return sum(len(unpack(e["topics"]["pay"])) for e in out)

    assert written(1_000) == 200
    assert written(1_001) == 0  # the same slot: no turn came
    assert written(1_001 + 300) == 200  # an interval later: every slot's turn came


def test_busy_ticks_checkpoint_a_slot_of_partitions_each(redis_url, settings):
    """The engine's own ticks, a second apart, every partition busy: the first tick's
    entry has every partition, then each tick's the partitions of its slot (an interval
    of 50 s: a slot a second, two partitions of 100), and within any interval every
    partition's offsets are checkpointed again."""
    from cluster.core.replication.hw_codec import unpack
    from cluster.services.records import topic_set_producer_rate
    from cluster.services.replication import replication_tick
    from cluster.services.waiting import LocalQueue

    settings.HISTORY_HW_INTERVAL_S = 50
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "busy", "-p", "100", "-r", "3")
    topic_set_producer_rate(name="busy", rate=100.0)
    fresh_process()
    start = head()
    at = 1_000_000
    for _ in range(61):
        at += 1_000
        queue = LocalQueue()
        replication_tick(now=at, dispatch=queue)
        queue.drain()
    rows = [(e["at"], [r[0] for r in unpack(e["topics"]["busy"])])
            for e in entries_since(start) if e["type"] == "hw" and "busy" in e["topics"]]
    assert len(rows[0][1]) == 100
    assert all(len(parts) <= 2 for _, parts in rows[1:]), [len(p) for _, p in rows]
    last: dict[int, int] = {}
    for when, parts in rows:
        for p in parts:
            assert when - last.get(p, when) <= 50_000, (p, when)
            last[p] = when
    assert len(last) == 100 and min(last.values()) > rows[0][0]


def test_a_unit_with_no_set_loaded_leaves_the_turn_to_the_next_with_sets(monkeypatch,
                                                                        settings):
    """The coordinator's quiet tick loads no set (reading them asks for the whole state):
    it checkpoints nothing and takes no slot's turn, so the shards' next unit, in the same
    slot, still writes that slot's partitions."""
    from types import SimpleNamespace

    from cluster.adapters import unloaded
    from cluster.core.replication.hw_codec import unpack

    keys, hook, hot = _busy_hook(monkeypatch, settings, 200)
    summaries = {k: _summary(1) for k in keys}
    assert len(unpack(hook(hot, summaries, at=1_000_000, writes_entries=False)[0]["topics"]
                      ["pay"])) == 200
    quiet = SimpleNamespace(differs=[], moved=[], topics=hot.topics,
                            state=SimpleNamespace(replica_sets=unloaded.UnloadedSets(),
                                                  steady=Steady()))
    at = 1_000_000 + 6_000  # the next slot
    assert hook(quiet, {}, at=at, writes_entries=True) == []
    (entry,) = hook(hot, {k: _summary(2) for k in keys}, at=at + 1, writes_entries=False)
    assert len(unpack(entry["topics"]["pay"])) == 200 // checkpoints.SLOTS
