"""The detector: which anomalies one snapshot of the cluster shows."""
from __future__ import annotations

from collections import Counter

from healing.core import AnomalyType, Settings, detect, in_lrs, new_shrinks, shrinks_in_window
from healing.core.model import SpuView, Snapshot
from tests.unit.healing.fixtures import SPREAD, partitions, snapshot, spus

ALL = Settings(goal_violation_enabled=True)
WITHOUT_4 = [tuple(s for s in r if s != 4) for r in SPREAD]


def kinds(found) -> list[tuple[str, str]]:
    return [(f.type.value, f.subject) for f in found]


def test_a_healthy_spread_cluster_shows_nothing():
    assert detect(snapshot(SPREAD), ALL) == []


def test_an_spu_down_with_replicas_is_an_anomaly_naming_it():
    found = detect(snapshot(SPREAD, down=(4,)), ALL)
    assert kinds(found) == [("spu_down", "spu-4")]
    assert found[0].spus == (4,) and found[0].count == 3


def test_an_spu_down_holding_nothing_is_no_anomaly():
    layout = [(0, 2, 4), (2, 4, 1), (4, 1, 3), (1, 3, 4), (3, 4, 0), (2, 0, 4)]
    assert detect(snapshot(layout, down=(5,)), Settings()) == []


def test_spread_and_balance_wait_while_an_spu_down_still_holds_replicas():
    lopsided = [(0, 1, 5)] * 6  # racks a, a, c and every leader on SPU 0
    racks = {0: "a", 1: "a", 2: "b", 5: "c"}
    assert kinds(detect(snapshot(lopsided, down=(5,), racks=racks), ALL)) == \
        [("spu_down", "spu-5")]
    assert kinds(detect(snapshot(lopsided, racks=racks), ALL)) == \
        [("rack_spread", "racks"), ("goal_violation", "balance")]


def test_a_partition_spanning_fewer_racks_than_are_up_is_a_spread_anomaly():
    layout = list(SPREAD)
    layout[0] = (0, 1, 2)  # racks a, a, b while c is up
    found = detect(snapshot(layout), Settings())
    assert kinds(found) == [("rack_spread", "racks")] and found[0].count == 1


def test_spread_is_not_asked_of_topics_ignoring_racks_nor_of_rackless_clusters():
    assert detect(snapshot([(0, 1, 2)], racks={0: None, 1: None, 2: None}), Settings()) == []
    s = snapshot([(0, 1, 2)])
    ignoring = Snapshot(s.spus, tuple(p.__class__(**{**p.__dict__, "racks_apart": False})
                                      for p in s.partitions), 0)
    assert detect(ignoring, Settings()) == []


def test_spread_wanted_is_what_the_racks_up_allow():
    # Rack c entirely down and drained: two racks are all a partition can span.
    layout = [(0, 2, 1), (2, 1, 3), (1, 3, 0)]
    assert detect(snapshot(layout, down=(4, 5)), Settings()) == []
    assert kinds(detect(snapshot(layout), Settings())) == [("rack_spread", "racks")]


def test_fewer_registered_replicas_than_the_factor_is_under_replicated():
    s = snapshot(SPREAD)
    ghost = Snapshot(tuple(x for x in s.spus if x.id != 5), s.partitions, 0)
    found = detect(ghost, Settings(rack_spread_enabled=False))
    assert kinds(found) == [("under_replicated", "topology")] and found[0].count == 3
    short = snapshot([(0, 2)], factor=3)
    assert kinds(detect(short, Settings(rack_spread_enabled=False))) == \
        [("under_replicated", "topology")]


def test_leader_skew_beyond_ten_percent_is_a_goal_violation():
    leaders_on_0 = [(0, 2, 4), (0, 4, 2), (0, 3, 5), (1, 3, 5), (3, 5, 0), (5, 0, 2)]
    found = detect(snapshot(leaders_on_0), ALL)
    assert kinds(found) == [("goal_violation", "balance")]
    assert "leader skew" in found[0].detail


def test_rounding_is_no_skew_and_balancing_is_off_by_default():
    ten_on_three = [(i % 3, (i + 1) % 3) for i in range(10)]
    racks = {0: "a", 1: "b", 2: "c"}
    assert detect(snapshot(ten_on_three, racks=racks), ALL) == []
    empty_new_spu = {**racks, 3: "d"}
    assert kinds(detect(snapshot(ten_on_three, racks=empty_new_spu), ALL)) == \
        [("goal_violation", "balance")]
    assert detect(snapshot(ten_on_three, racks=empty_new_spu), Settings()) == []


def test_an_lrs_member_leaving_while_its_spu_stays_up_is_a_shrink():
    before = in_lrs(snapshot(SPREAD))
    shrunk = snapshot(SPREAD, lrs=[(0, 2)] + [r for r in SPREAD[1:]])
    assert new_shrinks(before, shrunk) == Counter({4: 1})


def test_an_spu_going_down_or_a_replica_moved_away_is_no_shrink():
    before = in_lrs(snapshot(SPREAD))
    assert new_shrinks(before, snapshot(SPREAD, down=(4,),
                                        lrs=[tuple(s for s in r if s != 4) for r in SPREAD])) == {}
    moved = list(SPREAD)
    moved[0] = (0, 2, 5)
    assert new_shrinks(before, snapshot(moved, lrs=[(0, 2)] + SPREAD[1:])) == {}


def test_shrinks_past_the_window_are_forgotten_and_enough_in_it_report_a_slow_spu():
    history = shrinks_in_window({4: [1_000, 50_000]}, Counter({4: 2}), 60_000, window_s=30)
    assert history == {4: [50_000, 60_000, 60_000]}
    found = detect(snapshot(SPREAD), Settings(slow_spu_shrinks=3), slow=[(4, 3), (2, 1)])
    assert kinds(found) == [("slow_spu", "spu-4")]


def test_a_flapping_spu_is_no_slow_spu_whatever_the_check_interval():
    """Issue 36: "SPU 4 left the LRS 21 times in 300 s" for an SPU going down and up."""
    settings = Settings()
    whole, down = snapshot(SPREAD), snapshot(SPREAD, down=(4,), lrs=WITHOUT_4)
    catching_up = snapshot(SPREAD, lrs=WITHOUT_4)  # looks up, out of every LRS
    history: dict[int, list[int]] = {}
    seen = in_lrs(whole)

    def check(now: Snapshot, at: int, went_down: set[int] = frozenset()) -> None:
        nonlocal history, seen
        history = shrinks_in_window(history, new_shrinks(seen, now), at,
                                    settings.slow_spu_window_s, went_down)
        seen = in_lrs(now)

    for cycle in range(21):
        at = cycle * 12_000
        # Short interval: dropped by its leaders while silent, declared down a check later.
        check(catching_up, at)
        check(down, at + 2_000, {4})
        check(whole, at + 4_000)
        # Long interval: down and back between two checks, seen catching up.
        check(catching_up, at + 10_000, {4})
        check(whole, at + 11_000)
    slow = [(s, len(t)) for s, t in history.items()]
    assert [f for f in detect(whole, settings, slow) if f.type is AnomalyType.SLOW_SPU] == []


def test_an_spu_leaving_the_lrs_while_it_stays_up_is_still_slow():
    history: dict[int, list[int]] = {}
    for at in (1_000, 2_000, 3_000):
        history = shrinks_in_window(history, Counter({4: 1}), at, 300, went_down={2})
    assert history == {4: [1_000, 2_000, 3_000]}


def test_a_disabled_anomaly_is_not_detected():
    assert detect(snapshot(SPREAD, down=(4,)), Settings(spu_down_enabled=False)) == []
    assert spus()[0] == SpuView(0, "a", True)
    assert len(partitions(SPREAD)) == 6
