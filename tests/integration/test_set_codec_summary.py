"""A status's encoding and its summary come from one pass over the set's replicas: the
summary is the one ``summary`` gives, and the encoding decodes back to the set, for sets
of every shape (leaderless, compacted, diverged, behind, ahead)."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from cluster.adapters.set_codec import decode_set, encode_set, encode_status, summary
from cluster.core.replication import Replica, ReplicaSet, Resolution
from cluster.core.replication.compaction import reference_replica


@st.composite
def replica_sets(draw) -> ReplicaSet:
    spus = draw(st.lists(st.integers(0, 9), min_size=1, max_size=4, unique=True))
    start = draw(st.integers(0, 50))
    reference = list(range(1000, 1000 + draw(st.integers(0, 12))))
    replica = {}
    for s in spus:
        shape = draw(st.sampled_from(["prefix", "compacted", "diverged", "empty"]))
        if shape == "prefix":
            r = Replica(s, reference[:draw(st.integers(0, len(reference)))], start=start)
        elif shape == "compacted":
            r = Replica(s, [], start=draw(st.integers(0, start)))
        elif shape == "diverged":
            keep = draw(st.integers(0, len(reference)))
            r = Replica(s, reference[:keep] + [5000 + s], start=start)
        else:
            r = Replica(s, [], start=0)
        r.hw = draw(st.integers(0, r.leo))
        r.claims_leadership = draw(st.booleans())
        r.caught_up_ms = draw(st.none() | st.integers(0, 10_000))
        replica[s] = r
    leader = draw(st.none() | st.sampled_from(spus))
    lrs = [s for s in spus if s == leader or draw(st.booleans())]
    resolution = Resolution.ONLINE if leader is not None else draw(
        st.sampled_from([Resolution.ELECTION, Resolution.OFFLINE]))
    return ReplicaSet("t", draw(st.integers(0, 99)), spus, replica, leader, lrs, resolution,
                      hw=draw(st.integers(0, 60)), epoch=draw(st.integers(0, 5)))


@settings(max_examples=300, deadline=None)
@given(replica_sets())
def test_the_summary_read_with_the_encoding_is_the_sets_summary(rs):
    data, summed = encode_status(rs, reference_replica(rs))
    assert summed == summary(rs)
    assert isinstance(data, bytes)


@settings(max_examples=300, deadline=None)
@given(replica_sets())
def test_every_shape_of_set_round_trips_through_its_encoding(rs):
    back = decode_set(encode_set(rs))
    ref = reference_replica(rs)
    assert [(s, r.start, r.log, r.hw) for s, r in back.replica.items()] == [
        (s, r.start, r.log, r.hw) for s, r in rs.replica.items()]
    assert (back.leader, back.lrs, back.hw, back.epoch) == (rs.leader, rs.lrs, rs.hw, rs.epoch)
    # The caught-up clock is kept only for a replica behind the reference.
    assert [r.caught_up_ms for r in back.replica.values()] == [
        r.caught_up_ms if r.leo < ref.leo else None for r in rs.replica.values()]
