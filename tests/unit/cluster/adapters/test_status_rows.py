"""Steady sets' statuses written as rows (cluster/adapters/status_rows.py): what a reader
makes of the fields and rows a save writes is every set's status, after the whole save and
after any of its pieces alone.

The saves are those of the fault schedules (elections, moves, cuts, compaction: sets
entering and leaving the steady index all the time). Redis is a dict here: each save's
scripts are applied piece by piece (set_records.statuses_of), in the order the save sends
them and in the reverse one, and after every piece each set must read as its status before
the save or after it; after the last, as after it."""
from __future__ import annotations

from collections import Counter
from random import Random

import pytest

from cluster.adapters import redis_keys, save_pieces, set_records, status_rows
from cluster.adapters.hot_records import values_key
from cluster.adapters.hot_save import _by_hash
from cluster.adapters.save_encoding import compact_and_encode as _compact_and_encode
from cluster.adapters.save_pieces import row_pieces
from cluster.adapters.hot_types import HotState
from cluster.adapters.set_codec import apart_count, encode_status
from cluster.adapters.summaries import Saved
from cluster.core.replication.compaction import reference_replica
from cluster.adapters.set_loading import sets_key
from tests.unit.cluster.core.replication.test_steady_sets import _Pair


@pytest.fixture(autouse=True)
def _store():
    with redis_keys.bound_to_store("rows"):  # key names only: no Redis is reached
        yield


def test_an_entry_applies_only_over_the_field_it_names():
    field, newer, status = b"field-bytes", b"written-since", b"the-status"
    row = status_rows.row_of([status_rows.head(3, field), status_rows.head(9, newer)],
                             [status, b"other"])
    assert list(status_rows.entries(row)) == [(3, status_rows.anchor(field), status),
                                              (9, status_rows.anchor(newer), b"other")]
    rowed: dict = {("t", 3): b"stale"}
    read = status_rows.overlay([(("t", 3), field)], {"t": {"0": row}}, rowed)
    assert read == [(("t", 3), status)] and rowed == {("t", 3): status_rows.head(3, field)}
    read = status_rows.overlay([(("t", 3), newer)], {"t": {b"0": row}}, rowed)
    assert read == [(("t", 3), newer)] and rowed == {}
    assert status_rows.overlay([(("t", 3), field)], {"t": {"0": None}}) == [(("t", 3), field)]


def test_a_blocks_keys_stop_at_its_topics_last_partition():
    blocks = status_rows.Blocks({"t": {"pk": 1, "partitions": [7, 8, 9]}})
    assert status_rows.block_keys(("t", 0), 3) == [("t", 0), ("t", 1), ("t", 2)]
    assert len(status_rows.block_keys(("t", 0))) == status_rows.shards.BLOCK
    assert blocks._keys(("t", 0)) == [("t", 0), ("t", 1), ("t", 2)]
    blocks.dirty[("t", 0)] = [("t", 4)]  # a changed set past the count: covered all the same
    assert blocks._keys(("t", 0))[-1] == ("t", 4)
    assert len(status_rows.Blocks()._keys(("u", 0))) == status_rows.shards.BLOCK


def test_a_row_keeps_the_old_entry_of_a_set_whose_field_the_save_writes():
    blocks = status_rows.Blocks()
    raw = {("t", 0): b"a", ("t", 1): b"b", ("t", 270): b"c"}  # 270: block 1 (shards.BLOCK)
    rowed = {k: status_rows.HEAD.pack(k[1], bytes([65 + k[1] % 26]) * 8)
             for k in (("t", 0), ("t", 270))}
    blocks.leaving(("t", 1), status_rows.HEAD.pack(1, b"B" * 8), b"old-b")
    row = blocks.row(("t", 0), raw, rowed)
    assert [(p, a) for p, a, _ in status_rows.entries(row)] == [(0, b"A" * 8), (1, b"B" * 8)]
    assert [s for _, _, s in status_rows.entries(row)] == [b"a", b"old-b"]


class _Redis:
    """The hashes a save's scripts set (status fields and rows), as a reader reads them."""

    def __init__(self) -> None:
        self.hashes: dict[str, dict[str, bytes]] = {}

    def apply(self, piece) -> None:
        for op in piece:
            # (The values compaction released go by a script of their own: no status.)
            if op is not None and op.op == "eval" and not op.key.startswith(values_key("")):
                for name, fields in set_records.statuses_of(op).items():
                    self.hashes.setdefault(name, {}).update(fields)

    def read(self, topics) -> dict:
        fields = [((t, int(p)), data) for t in topics
                  for p, data in self.hashes.get(sets_key(t), {}).items()]
        rows = {t: self.hashes.get(status_rows.rows_key(t), {}) for t in topics}
        return dict(status_rows.overlay(fields, rows))


def _check(redis: _Redis, pieces, before, after, where: str) -> None:
    topics = {k[0] for k in after}
    for n, piece in enumerate(pieces):
        redis.apply(piece)
        seen = redis.read(topics)
        wrong = [k for k in after if seen.get(k) not in (before.get(k), after[k])]
        assert not wrong, f"{where}: after piece {n}, {wrong[:3]}"
    seen = redis.read(topics)
    assert {k: seen.get(k) for k in after} == after, where


@pytest.mark.parametrize("backwards", [False, True])
@pytest.mark.parametrize("dense", [save_pieces.DENSE, 0])
@pytest.mark.parametrize("block", [None, 2, "tables"])
@pytest.mark.parametrize("events", [1.0, 0.2])
def test_every_set_reads_as_its_status_whatever_pieces_landed(backwards, dense, block, events,
                                                              monkeypatch):
    """(``dense`` 0: every block counts as sparse, so every set a row held that changed is
    written as a field instead, save_pieces.sparse_to_fields. ``block`` 2: rows of two
    sets, so many blocks have every set changed, and their rows are the entries the loop
    collected, ``Blocks.full``. "tables": the topics' tables name their partitions, so a
    block's keys stop at the topic's last, ``status_rows.block_keys``. ``events``: the share
    of steps that play the schedule's next event; the others only produce and round, so
    sets stay steady over several saves and are saved as their figures.)"""
    tables = block == "tables"
    block = 4 if tables else block
    from cluster.adapters import shards

    monkeypatch.setattr(save_pieces, "DENSE", dense)
    if block is not None:
        monkeypatch.setattr(shards, "BLOCK", block)
    rowed_saves = left = full = figured = 0
    for seed in range(30):
        pair, rng = _Pair(seed), Random(seed)
        counts = Counter(k[0] for k in pair.a.state.replica_sets)
        hot = HotState(pair.a.state, {t: {"pk": 1, "partitions": list(range(n))}
                                      for t, n in counts.items()} if tables else {})
        redis = _Redis()
        raw: dict = {}
        statuses: dict = {}
        for run in (pair.a, pair.b):  # only the save compacts, as in test_steady_encoding
            run._maybe_compact = lambda: None  # type: ignore[method-assign]
        for i in range(rng.randint(20, 40)):
            if events == 1.0 or rng.random() < events:
                for run in (pair.a, pair.b):
                    run.step()
                    run.elections_pass()
            pair.tick()
            was_rowed = set(hot.rowed)
            hot.after = {}  # a unit's own, as each unit of work starts with
            records = set_records.Writes()
            encoded = _compact_and_encode(hot, rng.choice((2, 5, 10_000)), records, rows=True)
            hot.state.steady.mark()  # the unit's log entries mark it (engine/entries.py)
            full += sum(map(encoded.rows.full, encoded.rows.dirty))
            limit = rng.choice((2, 3, 500))
            with _piece_limit(limit):
                pieces = row_pieces(encoded.rows, encoded.row_records, hot.raw, hot.rowed,
                                    encoded.released, values_key, lambda _: True)
            pieces.append([records.op(None, _by_hash(encoded.changed))])
            rowed_saves += bool(encoded.rows.dirty)
            left += len(was_rowed - set(hot.rowed))
            before, statuses = statuses, _statuses(hot, raw, statuses)
            _records_followed(hot, f"seed={seed} step {i}")
            raw = dict(hot.raw)
            figured += sum(type(v) is tuple for v in raw.values())
            _check(redis, pieces[::-1] if backwards else pieces, before, statuses,
                   f"seed={seed} step {i}")
    # (Fewer events: fewer sets leave rows, and more stay in them as their figures.)
    leaving = 100 if events == 1.0 else 20
    if dense:
        assert rowed_saves > 120 and left > leaving, (rowed_saves, left)
        if block is not None:
            assert full > 10, full  # 29 with these seeds
        if events < 1:  # sets whose truth was their figures after a save
            assert figured > 500, figured
    else:  # no row is rewritten; the sets that were in rows leave them as fields
        assert rowed_saves == 0 and left > leaving, (rowed_saves, left)


def _statuses(hot: HotState, raw: dict, statuses: dict) -> dict:
    """Each set's status after a save: its field's or entry's bytes, or for a set saved as
    its figures (status_rows.py) what ``encode_status`` gives for it (the reference: a
    reader must rebuild exactly that from the field the entry names), whose summary must be
    the one the save gave."""
    out = {}
    clock = hot.state.steady.round_ms
    for key, value in hot.raw.items():
        if type(value) is not tuple:
            out[key] = value
        elif raw.get(key) is value:  # not saved again: what it was
            out[key] = statuses[key]
        else:
            rs = hot.state.replica_sets[key]
            out[key], summary = encode_status(rs, rs.replica[rs.leader], steady=True,
                                              lrs_clock=clock)
            assert Saved(hot)[key] == summary, key  # what the projections read of it
    return out


def _records_followed(hot: HotState, where: str) -> None:
    """What each set's records key holds once the save lands (``HotState.stored``: it moves
    only with a write the save makes) is the part of its reference log kept apart: a set
    saved as its figures skips the lookup while its run is the one it was saved with."""
    for key, rs in hot.state.replica_sets.items():
        if key not in hot.stored:
            continue
        ref = reference_replica(rs)
        count = apart_count(key[1], ref.start, len(ref.log))
        start, n, last = hot.stored[key]
        assert (n, last) == (count, ref.log[count - 1] if count else None), (where, key)
        assert start == ref.start or not n, (where, key)


class _piece_limit:
    def __init__(self, limit: int) -> None:
        self.limit = limit

    def __enter__(self) -> None:
        from django.conf import settings
        self.was = settings.REPLICATION_SAVE_PIECE_SETS
        settings.REPLICATION_SAVE_PIECE_SETS = self.limit

    def __exit__(self, *exc) -> None:
        from django.conf import settings
        settings.REPLICATION_SAVE_PIECE_SETS = self.was
