"""The fixes: a drain of the SPUs down, racks restored with one move each, repairs, budget."""
from __future__ import annotations

from collections import Counter

from healing.core import AnomalyType, plan_fix, target_of
from healing.core.fixes import drain_many
from healing.core.model import Snapshot
from tests.unit.healing.fixtures import RACKS, SPREAD, snapshot


def racks_of(reps) -> set[str]:
    return {RACKS[s] for s in reps}


def test_healing_an_spu_down_moves_only_its_replicas_and_keeps_racks_apart():
    fix = plan_fix(AnomalyType.SPU_DOWN, snapshot(SPREAD, down=(4,)), [4])
    assert len(fix.moves) == 3
    for m in fix.moves:
        assert m.removed == (4,) and len(m.added) == 1 and m.added[0] != 4
        assert len(m.after) == 3 and racks_of(m.after) == {"a", "b", "c"}
        assert set(m.before) - {4} <= set(m.after)


def test_a_whole_rack_down_heals_in_one_plan_breaking_the_rack_rule_only_where_it_must():
    moves = drain_many(snapshot(SPREAD, down=(4, 5)), [4, 5])
    assert len(moves) == 6  # one move per partition, however many of its SPUs went
    for m in moves:
        assert not {4, 5} & set(m.after) and len(m.after) == 3
        assert racks_of(m.after) == {"a", "b"}
    held = Counter(s for m in moves for s in m.after)
    assert max(held.values()) - min(held.values()) <= 1


def test_the_leader_on_the_lost_spu_is_replaced_by_a_replica_that_stays():
    [m] = [m for m in plan_fix(AnomalyType.SPU_DOWN, snapshot(SPREAD, down=(4,)), [4]).moves
           if m.before[0] == 4]
    assert m.after[0] in m.before and m.after[-1] not in m.before


def test_a_fix_says_how_many_partitions_it_leaves_breaking_the_rack_rule():
    assert plan_fix(AnomalyType.SPU_DOWN, snapshot(SPREAD, down=(4,)), [4]).racks_broken == 0
    assert plan_fix(AnomalyType.SPU_DOWN, snapshot(SPREAD, down=(4, 5)), [4, 5]).racks_broken == 6


def test_when_the_rack_is_back_one_replica_per_partition_moves_to_it():
    drained = drain_many(snapshot(SPREAD, down=(4, 5)), [4, 5])
    layout = [m.after for m in sorted(drained, key=lambda m: m.partition)]
    fix = plan_fix(AnomalyType.RACK_SPREAD, snapshot(layout), ())
    assert len(fix.moves) == 6
    for m in fix.moves:
        assert len(m.added) == 1 and RACKS[m.added[0]] == "c"
        assert racks_of(m.after) == {"a", "b", "c"}
        assert m.after[0] == m.before[0], "the leader stays: no election for a spread repair"
    assert Counter(m.added[0] for m in fix.moves) == {4: 3, 5: 3}


def test_an_unregistered_spus_replicas_are_replaced_in_place_on_other_racks():
    s = snapshot(SPREAD)
    ghost = Snapshot(tuple(x for x in s.spus if x.id != 4), s.partitions, 0)
    fix = plan_fix(AnomalyType.UNDER_REPLICATED, ghost, ())
    assert len(fix.moves) == 3
    for m in fix.moves:
        assert m.removed == (4,) and m.added == (5,)
        assert m.after.index(5) == m.before.index(4)


def test_a_short_replica_list_is_filled_up_to_its_factor():
    fix = plan_fix(AnomalyType.UNDER_REPLICATED, snapshot([(0, 2)], factor=3), ())
    [m] = fix.moves
    assert m.before == (0, 2) and len(m.after) == 3 and RACKS[m.after[2]] == "c"


def test_the_rebalance_moves_replicas_onto_an_empty_spu():
    racks = {0: "a", 1: "b", 2: "c", 3: "d"}
    layout = [(i % 3, (i + 1) % 3) for i in range(12)]
    fix = plan_fix(AnomalyType.GOAL_VIOLATION, snapshot(layout, racks=racks), ())
    after = Counter(s for reps in [m.after for m in fix.moves] for s in reps)
    assert fix.moves and after[3] > 0


def test_the_hourly_budget_cuts_the_plan_and_counts_what_is_left():
    fix = plan_fix(AnomalyType.SPU_DOWN, snapshot(SPREAD, down=(4,)), [4], budget=2)
    assert len(fix.moves) == 2 and fix.cut == 1
    target = target_of(fix.current, fix.moves)
    assert sum(4 in p["replicas"] for p in target["t"]) == 1


def test_a_drain_with_no_spu_left_to_take_a_replica_is_refused_by_the_planner():
    import pytest

    from planner.core import PlanError

    with pytest.raises(PlanError, match="no other SPU"):
        plan_fix(AnomalyType.SPU_DOWN, snapshot([(0, 1, 2)], down=(2,),
                                                racks={0: "a", 1: "b", 2: "c"}), [2])


def test_a_slow_spus_leaderships_go_to_an_lrs_member_without_copying_anything():
    lrs = [(2, 4) if p == 0 else reps for p, reps in enumerate(SPREAD)]  # 0 slow on t/0
    fix = plan_fix(AnomalyType.SLOW_SPU, snapshot(SPREAD, lrs=lrs), [0])
    [m] = fix.moves
    assert m.before == (0, 2, 4) and m.after == (2, 0, 4)
    assert m.added == () and m.removed == () and m.leader_change
