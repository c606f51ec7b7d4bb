from __future__ import annotations

import pytest

from planner.core import (Cluster, PlanError, Scenario, Spu, Topic, apply_scenario, plan,
                          rack_additions, rack_losses, single_removals, standard_grid)


def cluster() -> Cluster:
    spus = tuple(Spu(i, "ab"[i % 2]) for i in range(4))
    return Cluster(spus, (Topic("t", ((0, 1), (2, 3))),))


def test_losing_a_rack_removes_all_its_spus():
    effective = apply_scenario(cluster(), Scenario("lose a", lose_racks=("a",)))
    assert effective.ids == (1, 3) and effective.removed == {0, 2}


@pytest.mark.parametrize("scenario, message", [
    (Scenario(remove_spus=(9,)), "unknown SPU 9"),
    (Scenario(lose_racks=("z",)), "unknown rack"),
    (Scenario(add_spus=(Spu(1),)), "already exists"),
    (Scenario(replication=(("nope", 2),)), "unknown topic"),
    (Scenario(replication=(("t", 0),)), "at least 1"),
    (Scenario(replication=(("t", 5),)), "needs 1 more SPUs"),
    (Scenario(remove_spus=(0, 1, 2)), "needs 1 more SPUs"),
])
def test_impossible_scenarios_are_refused_with_a_reason(scenario, message):
    with pytest.raises(PlanError, match=message):
        plan(cluster(), scenario)


def test_the_standard_grid_has_every_removal_rack_loss_and_addition():
    grid = standard_grid(cluster(), up_to=2)
    assert len(single_removals(cluster())) == 4 and len(rack_losses(cluster())) == 2
    assert [s.name for s in rack_additions(cluster(), 2)] == [
        "add-1-to-a", "add-2-to-a", "add-1-to-b", "add-2-to-b"]
    assert len(grid) == 4 + 2 + 4
    assert rack_additions(cluster(), 2)[1].add_spus == (Spu(4, "a"), Spu(5, "a"))
