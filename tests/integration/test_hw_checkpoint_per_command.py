"""A command that changes no offsets appends no ``hw`` checkpoint (issue 36 item 7): each
``manage.py`` run, a fresh process, used to write its own copy of every partition's HW."""
from __future__ import annotations

import pytest

from cluster.adapters import metadata_log
from cluster.ports import bound_to_store
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
    hot = SimpleNamespace(differs=[("pay", 1)], moved=[], state=SimpleNamespace(replica_sets={}))
    fresh = checkpoints.HwCheckpoints()  # a fresh process's
    (entry,) = fresh(hot, after, at=1_000_000, writes_entries=False)
    from cluster.core.replication.hw_codec import unpack

    assert [row[:2] for row in unpack(entry["topics"]["pay"])] == [(1, 9)]
    # The next unit of the same process, nothing moved: nothing written.
    hot.differs = []
    assert fresh(hot, after, at=1_000_001, writes_entries=True) == []
