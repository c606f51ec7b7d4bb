"""A steady set saved as its figures (status_rows.py's figures entries, steady_codec.Figures):
a reader rebuilds, from the field the entry names and the figures, the very bytes
``encode_status`` gives for the set; the set cache knows a set it committed as figures by
the status read back. The fault schedules' check (test_status_rows.py) covers the save's
side; these pin the format and the rebuild on a set of each shape."""
from __future__ import annotations

import msgpack
import pytest

from cluster.adapters import redis_keys, row_format, set_records, status_rows, steady_codec
from cluster.adapters.hot_types import HotState
from cluster.adapters.save_encoding import compact_and_encode
from cluster.adapters.set_cache import Image, SetCache
from cluster.adapters.set_codec import encode_status
from cluster.core.replication import (Acks, add_topic, new_cluster, produce_many,
                                      replication_step)

SCOPE = ("test", ("lock",))


@pytest.fixture(autouse=True)
def _store():
    with redis_keys.bound_to_store("figures"):  # key names only: no Redis is reached
        yield


def _saved_as_figures(replicas: list[list[int]], appends: int = 11):
    """Sets saved until the save keeps them as figures; returns the hot state, each set's
    field as first written (the anchor) and the saves' encodings."""
    state = new_cluster(range(5))
    add_topic(state, "t", replicas)
    now = 0
    replication_step(state, now)
    hot = HotState(state, {})
    fields = {}
    for n in range(appends):
        produce_many(state, [(k, 1 + n % 3) for k in state.replica_sets], Acks.LEADER)
        if n % 2:  # now and then a round: followers level, or trail until the next
            now += 10
            replication_step(state, now)
        encoded = compact_and_encode(hot, 10_000, set_records.Writes(), rows=True)
        for topic, changed in encoded.changed.items():
            for field, data in changed.items():
                fields.setdefault((topic, int(field)), data)
        state.steady.mark()
    return hot, fields


def _status(hot: HotState, key) -> bytes:
    rs = hot.state.replica_sets[key]
    return encode_status(rs, rs.replica[rs.leader], steady=True,
                         lrs_clock=hot.state.steady.round_ms)[0]


@pytest.mark.parametrize("replicas", [[[0, 1, 2], [1, 2, 0], [2, 0, 1]], [[3, 4]], [[4]],
                                      [[0, 1, 2, 3, 4]]])
def test_a_row_of_figures_reads_back_as_each_sets_status(replicas):
    hot, fields = _saved_as_figures(replicas)
    figures = {k: v for k, v in hot.raw.items() if type(v) is tuple}
    assert set(figures) == set(hot.state.replica_sets)  # every set, whatever its shape
    for key, kept in figures.items():
        status = _status(hot, key)
        assert steady_codec.from_figures(fields[key], kept) == status
        assert steady_codec.figures_of(status) == kept[:6] or len(replicas[0]) == 1
    # Through a row, with a status entry beside them (a set that is not figures).
    row = status_rows.split([kept[6] for kept in figures.values()] + [status_rows.head(9, b"f")],
                            [*figures.values(), b"a status"])
    read = status_rows.overlay([*fields.items(), (("t", 9), b"f")], {"t": {"0": row}})
    assert dict(read) == {**{k: _status(hot, k) for k in figures}, ("t", 9): b"a status"}


def test_an_entry_of_figures_over_another_field_is_not_applied():
    hot, fields = _saved_as_figures([[0, 1, 2]])
    key, kept = next(iter(hot.raw.items()))
    row = status_rows.row_of([], [], [kept])
    newer = b"written since"
    assert status_rows.overlay([(key, newer)], {"t": {"0": row}}) == [(key, newer)]
    assert status_rows.overlay([(key, fields[key])], {"t": {"0": row}}) == [
        (key, _status(hot, key))]


def test_a_set_committed_as_figures_is_taken_by_the_status_read_back():
    hot, fields = _saved_as_figures([[0, 1, 2], [1, 2, 0]])
    status = {k: _status(hot, k) for k in hot.raw}

    def cache() -> SetCache:
        return SetCache.holding(SCOPE, Image(dict(hot.state.replica_sets), dict(hot.raw),
                                             dict(hot.after), dict(hot.stored)))

    first, second = sorted(hot.raw)
    head = hot.raw[first][6]  # the row entry it was committed in, which the fetch read
    kept = cache()
    taken, _ = kept.take(SCOPE, first, status[first], head)
    assert taken is not None and taken[0] is hot.state.replica_sets[first]
    taken, _ = kept.take(SCOPE, second, fields[second], hot.raw[second][6])
    assert taken is None  # an older status: not that set
    # The same figures, read from the set's field rather than its row entry: another writer
    # put a status there (its figures may be the same), so it is read anew.
    taken, _ = cache().take(SCOPE, first, status[first])
    assert taken is None


@pytest.mark.parametrize("replicas", [[[0, 1, 2], [1, 2, 0], [2, 0, 1]], [[3, 4], [4, 0]]])
def test_the_replicas_read_without_rebuilding_figures_are_those_of_the_status_overlay_gives(
        replicas):
    """``replica_sources`` (finding an SPU's sets) reads the field under a figures entry and a
    status entry over its anchored field, as ``overlay`` does, without rebuilding figures: the
    replicas of every set are those of the status ``overlay`` gives."""
    hot, fields = _saved_as_figures(replicas)
    figures = {k: v for k, v in hot.raw.items() if type(v) is tuple}
    assert figures
    moved = msgpack.unpackb(fields[("t", 0)])
    moved[3] = [9, 8]  # a status entry that names other replicas than its field's
    other = msgpack.packb(moved)
    heads = [kept[6] for kept in figures.values()] + [status_rows.head(9, b"f")]
    row = status_rows.split(heads, [*figures.values(), other])
    stored = [*fields.items(), (("t", 9), b"f")]
    rows = {"t": {"0": row}}
    sources = status_rows.replica_sources(stored, rows)
    assert sources[-1] == (("t", 9), other)  # the status entry over its field
    assert [(k, msgpack.unpackb(d)[3]) for k, d in sources[:-1]] == [
        (k, msgpack.unpackb(d)[3]) for k, d in status_rows.overlay(stored, rows)[:-1]]
    # A status entry over another field than the one it was anchored to is not applied.
    assert status_rows.replica_sources([(("t", 9), b"g")], rows) == [(("t", 9), b"g")]


@pytest.mark.parametrize("seed", range(12))
def test_the_entries_of_some_partitions_are_those_every_entry_gives_for_them(seed):
    """A load of some sets decodes only their entries of the rows it reads
    (``_entries_of``): the same entries, in the same order, as decoding every one."""
    import random

    rng = random.Random(seed)
    n_figures, n_statuses = rng.randint(0, 40), rng.randint(0, 5)
    figures = [(rng.randint(0, 99), rng.randint(0, 99), rng.randint(0, 9), rng.randint(-1, 99),
                rng.choice([-1, rng.randint(0, 10**12)]),
                [rng.randint(0, 10**6) for _ in range(rng.randint(0, 4))],
                status_rows.head(p, b"field %d" % p)) for p in range(n_figures)]
    statuses = [b"status %d" % p for p in range(n_statuses)]
    heads = [status_rows.head(100 + p, b"s") for p in range(n_statuses)]
    row = status_rows.row_of(heads, statuses, figures)
    every = list(status_rows.entries(row))
    for share in (0.0, 0.1, 0.4, 0.9, 1.0):
        wanted = {p for p in [*range(n_figures), *range(100, 100 + n_statuses)]
                  if rng.random() < share}
        some = [(p, a, tuple(f) if type(f) is tuple else f)
                for p, a, f in row_format.entries_of(row, wanted)]
        assert some == [(p, a, tuple(f) if type(f) is tuple else f)
                        for p, a, f in every if p in wanted]
