"""The offsets mirror's per-set passes (engine/mirror.py): the reservations ``reserve``
raises and the changed sets with a row that ``offsets`` hands the live pages (the rows
checked a topic at a time: ``with_rows``), with their summaries, are, over random units
(topics interleaved or not, sets without a leader, sets with no row, sets new to the
unit), exactly what the general per-set loop gives."""
from __future__ import annotations

from random import Random

import pytest

from cluster.adapters.hot_types import HotState
from cluster.adapters.set_codec import Summary
from cluster.core.replication import Key, Resolution, new_cluster
from cluster.engine import mirror
from cluster.engine.mirror import OffsetsMirror, block, given_out, with_rows

STORE = "s"


def _general_reserve(m: OffsetsMirror, hot: HotState, after: dict[Key, Summary],
                     tables: dict[str, dict[int, int]]) -> list[tuple[int, int]]:
    """``reserve``'s rule, set by set."""
    grow, raised = [], []
    for key in hot.differs:
        table = tables.get(key[0], {})
        s = after[key]
        top = s[4] if s[4] is not None else s.stored_leo()
        if top > table.get(key[1], 0) and (pk := hot.partition_pk(key)) is not None:
            old = hot.before.get(key)
            to = top + block(top - (given_out(old) if old else 0), m.cycle(hot), pk)
            grow.append((pk, to))
            raised.append((table, key[1], to))
    for table, index, to in raised:
        table[index] = to
    return grow


def _unit(rng: Random) -> tuple[HotState, dict[Key, Summary], dict[str, dict[int, int]]]:
    """Random topics (one without a table, one whose table lacks its last sets), summaries
    and reservations."""
    sizes = {"a": rng.randint(1, 40), "b": rng.randint(1, 40), "c": rng.randint(1, 5),
             "gone": 3}
    topics = {name: {"pk": n + 1, "partitions": [100 * (n + 1) + i for i in range(size)]}
              for n, (name, size) in enumerate(sizes.items()) if name != "gone"}
    if rng.random() < 0.5:
        topics["b"]["partitions"] = topics["b"]["partitions"][:-2]  # rows not yet made
    hot = HotState(state=new_cluster([]), topics=topics)  # type: ignore[arg-type]
    keys = [(name, i) for name, size in sizes.items() for i in range(size)]
    if rng.random() < 0.5:
        rng.shuffle(keys)  # topics interleaved: the save's order need not be by topic
    after: dict[Key, Summary] = {}
    for key in keys:
        leo = rng.randint(0, 300)
        leader = None if rng.random() < 0.1 else 1
        replicas = ((1, leo, leo), (2, rng.randint(0, leo), 0))
        after[key] = Summary(leader, (1,), Resolution.ONLINE, leo,
                             None if leader is None else leo, replicas, 0)
        if rng.random() < 0.8:
            old = rng.randint(0, leo)
            hot.before[key] = Summary(1, (1,), Resolution.ONLINE, old, old,
                                      ((1, old, old),), 0)
    hot.differs = [k for k in keys if rng.random() < 0.9]
    tables = {name: {i: rng.randint(0, 320) for i in range(size) if rng.random() < 0.9}
              for name, size in sizes.items()}
    return hot, after, tables


def _compare(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    rng = Random(seed)
    hot, after, tables = _unit(rng)
    written: list[list[tuple[int, int]]] = []
    monkeypatch.setattr(mirror, "write_reserved", lambda rows: written.append(list(rows)))
    monkeypatch.setattr(mirror, "store_namespace", lambda: STORE)
    m = OffsetsMirror()
    # The process's reservations as read from the rows: a topic without a table has none.
    for name, table in hot.topics.items():
        m.reserved[(STORE, table["pk"])] = dict(tables[name])
    expected = {name: dict(t) for name, t in tables.items() if name in hot.topics}
    grow = _general_reserve(m, hot, after, expected)
    m.reserve(hot, after)
    assert written == [grow], f"seed={seed}"
    assert m.reservations_written == len(grow)
    assert {name: m.reserved[(STORE, t["pk"])] for name, t in hot.topics.items()} == expected
    general = [(k, after[k]) for k in hot.differs if hot.partition_pk(k) is not None]
    keys = with_rows(hot, hot.differs)
    assert list(zip(keys, map(after.__getitem__, keys))) == general, f"seed={seed}"


def test_reserve_and_the_changed_pairs_are_the_general_passes(monkeypatch):
    for seed in range(300):
        _compare(monkeypatch, seed)


def test_the_comparison_can_fail(monkeypatch):
    """A check of the rows that looked at the first set of a topic only, or a reservation
    raised by another block, is found."""
    monkeypatch.setattr(mirror, "_index", lambda key: 0)
    with pytest.raises(AssertionError, match="seed="):
        for seed in range(300):
            _compare(monkeypatch, seed)
    monkeypatch.undo()
    monkeypatch.setattr(mirror, "block", lambda growth, cycle, pk: mirror.RESERVE_MIN)
    with pytest.raises(AssertionError, match="seed="):
        for seed in range(300):
            _compare(monkeypatch, seed)
