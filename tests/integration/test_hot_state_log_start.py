"""The Redis encoding of a compacted replica set keeps each replica's log start and
builds only the retained records, whatever the LEO; sets stored earlier still decode."""
from __future__ import annotations

import msgpack

from cluster.adapters.hot_state import SET_FORMAT, decode_set, encode_set
from cluster.core.replication import Replica, ReplicaSet

DEEP = 1_000_000


def deep_set() -> ReplicaSet:
    """Leader 0 and follower 1 at LEO DEEP + 5 with 5 retained; follower 2 fell behind
    before compaction (wholly compacted at 400); follower 3 holds a diverged tail."""
    tail = list(range(7000, 7005))
    replica = {0: Replica(0, list(tail), hw=DEEP + 5, start=DEEP),
               1: Replica(1, tail[:3], hw=DEEP + 3, start=DEEP),
               2: Replica(2, [], hw=400, start=400),
               3: Replica(3, [7000, 9999], hw=DEEP, start=DEEP)}
    return ReplicaSet("t", 0, [0, 1, 2, 3], replica, 0, [0, 1], hw=DEEP + 5)


def test_a_deep_set_round_trips_with_its_log_starts_and_retained_records_only():
    back = decode_set(encode_set(deep_set()))
    assert back == deep_set()
    assert [(r.start, len(r.log), r.leo) for r in back.replica.values()] == [
        (DEEP, 5, DEEP + 5), (DEEP, 3, DEEP + 3), (400, 0, 400), (DEEP, 2, DEEP + 2)]


def test_the_encoding_stores_prefixes_as_lengths_and_a_diverged_log_with_its_start():
    fields = msgpack.unpackb(encode_set(deep_set()))
    start, tail, states = fields[13], fields[14], fields[15]
    assert (start, tail) == (DEEP, list(range(7000, 7005)))
    assert [s[0] for s in states] == [DEEP + 5, DEEP + 3, 400, [DEEP, [7000, 9999]]]


def test_a_set_written_before_log_starts_existed_decodes_to_the_same_replicas():
    # The earlier writer built its logs as [COMPACTED] * start + tail and stored the
    # same counts: a follower as its LEO, a diverged one as [leading compacted, rest].
    old = msgpack.packb((SET_FORMAT, "t", 0, [0, 1, 2, 3], 0, [0, 1], "Online", DEEP + 5, 0,
                         None, 0, [], [], DEEP, list(range(7000, 7005)),
                         [(DEEP + 5, DEEP + 5, False, 0, None), (DEEP + 3, DEEP + 3, False, 0, 1),
                          (400, 400, False, 0, 1), ([DEEP, [7000, 9999]], DEEP, False, 0, 1)],
                         {}))
    back = decode_set(old)
    assert [(r.start, r.log) for r in back.replica.values()] == [
        (r.start, r.log) for r in deep_set().replica.values()]
