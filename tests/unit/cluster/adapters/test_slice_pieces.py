"""A large save's pieces built from slices of the save loop's aligned lists (hot_save's
``_pieces`` through save_pieces.slice_ops and set_records.packed_op) send exactly the
commands the set-by-set builder (save_pieces.set_ops, Writes.op) sends: the same script,
the same arguments byte for byte, the same hashes, topics and fields in the same order.
Checked over the saves of the fault schedules (several topics, the steady sets last so a
topic comes back, compaction releasing ids, sets whose records did not change), cut in
pieces of a few sets (a topic cut in the middle), with held sets at the end, held sets
in the middle (set by set), and a dropped topic's values kept out."""
from __future__ import annotations

from random import Random

import pytest

from cluster.adapters import redis_keys, save_pieces, set_records
from cluster.adapters.hot_records import values_key
from cluster.adapters.hot_save import _pieces
from cluster.adapters.save_encoding import compact_and_encode as _compact_and_encode
from cluster.adapters.hot_types import HotState
from cluster.adapters.set_loading import sets_key
from tests.unit.cluster.core.replication.test_steady_sets import _Pair


@pytest.fixture(autouse=True)
def _store():
    with redis_keys.bound_to_store("slices"):  # key names only: no Redis is reached
        yield


def _general(encoded, records, parts, kept):
    return [save_pieces.set_ops(group, encoded.changed, records, encoded.released, sets_key,
                                values_key, kept) for group in parts]


def _holds(keys, rng):
    """No held set, held sets at the end (slices), held sets anywhere (not slices)."""
    tail = keys[-rng.randint(1, 4):]
    return [set(), set(tail), set(rng.sample(keys, min(3, len(keys))))]


class _Seen:
    def __init__(self) -> None:
        self.pieces = self.cut = self.released = self.unchanged = self.dropped = 0


def _compare(encoded, records, rng, seen: _Seen, where: str) -> None:
    keys = encoded.keys
    if len(keys) < 4:
        return
    gone = rng.choice(keys)[0]
    for limit in (2, 3, 5, 11):
        for hold in _holds(keys, rng):
            for kept in (lambda _: True, lambda name: name != gone):
                parts = save_pieces.groups(keys, hold, limit)
                fast, slow = _pieces(encoded, records, parts, kept), _general(
                    encoded, records, parts, kept)
                assert fast == slow, f"{where} limit={limit} hold={sorted(hold)}"
                if save_pieces.spans(keys, parts) is None:
                    continue
                seen.pieces += len(parts)
                seen.cut += sum(a[-1][0] == b[0][0] for a, b in zip(parts, parts[1:]))
                seen.released += sum(op.op == "eval" and op.key.startswith(values_key(""))
                                     for ops in fast for op in ops)
                seen.dropped += not kept(gone) and any(
                    k[0] == gone for k in encoded.released if k in set(keys))
                seen.unchanged += records.aligned.count(None)


def test_pieces_from_slices_send_what_set_by_set_sends():
    seen = _Seen()
    for seed in range(30):
        pair, rng = _Pair(seed), Random(seed)
        hot = HotState(pair.a.state, {})
        for run in (pair.a, pair.b):  # only the save compacts, as in test_steady_encoding
            run._maybe_compact = lambda: None  # type: ignore[method-assign]
        for i in range(rng.randint(20, 50)):
            for run in (pair.a, pair.b):  # the pair's ticks drive both runs
                run.step()
                run.elections_pass()
            pair.tick()
            records = set_records.Writes()
            encoded = _compact_and_encode(hot, rng.choice((2, 5, 10_000)), records)
            _compare(encoded, records, rng, seen, f"seed={seed} step {i}")
    assert seen.pieces > 1000 and seen.cut > 150, vars(seen)
    assert min(seen.released, seen.unchanged) > 300 and seen.dropped > 50, vars(
        seen)


def test_a_piece_where_a_topic_comes_back_goes_set_by_set():
    """(The schedules' saves come topic by topic: this case is built by hand.)"""
    keys = [("a", 0), ("b", 0), ("a", 1)]
    sets = save_pieces.Aligned(keys, ["0", "0", "1"], [b"x", b"y", b"z"], [None] * 3,
                               [0, 1, 2], [])
    args = (sets, 0, 3, {}, sets_key, values_key, lambda _: True)
    assert save_pieces.slice_ops(*args) is None
    assert save_pieces.slice_ops(sets, 0, 2, *args[3:]) is not None
