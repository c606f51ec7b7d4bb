"""Cost, risk and throttle commands on hand-checked layouts."""
from __future__ import annotations

from planner.core.cost import bytes_lower_bound, cost_summary, execution_order
from planner.core.model import Move, Topic
from planner.core.risk import layout_risk, risk_before_after
from planner.core.throttle_export import throttle_commands

RACKS = {1: "a", 2: "b", 3: "c", 4: "a"}


def test_risk_counts_offline_and_below_min_per_spu_and_rack():
    layout = {"t": ((1, 4), (1, 2), (2, 3))}  # partition 0 has both replicas in rack a
    risk = layout_risk(layout, RACKS, {"t": 2})
    racks = {r["rack"]: r for r in risk["racks"]}
    assert racks["a"] == {"rack": "a", "leaders_lost": 2, "offline": 1, "below_min_lrs": 2}
    spus = {r["spu"]: r for r in risk["spus"]}
    assert spus[2]["below_min_lrs"] == 2 and spus[2]["offline"] == 0
    better = risk_before_after(layout, {"t": ((1, 2), (1, 2), (2, 3))}, RACKS, {"t": 1})
    assert better["before"]["worst_rack"]["offline"] == 1
    assert better["after"]["worst_rack"]["offline"] == 0 and better["worse"] == []
    worse = risk_before_after({"t": ((1, 2),)}, {"t": ((1, 4),)}, RACKS, {"t": 1})
    assert worse["worse"] == ["worst_rack offline: 0 -> 1", "worst_rack below_min_lrs: 0 -> 1"]


def test_cost_per_spu_bottleneck_and_eta():
    moves = [Move("t", 0, (1, 2), (1, 3), (3,), (2,), False),
             Move("t", 1, (2, 1), (2, 4), (4,), (1,), False)]
    topics = [Topic("t", ((1, 2), (2, 1)), (100, 300))]
    cost = cost_summary(moves, topics, {"t": (1, 2)}, rate=10.0, per_spu_moves=1)
    rows = {r["spu"]: r for r in cost["per_spu"]}
    assert rows[1] == {"spu": 1, "bytes_in": 0, "bytes_out": 100, "moves_in": 0, "moves_out": 1}
    assert rows[4]["bytes_in"] == 300 and rows[2]["bytes_out"] == 300
    assert cost["bottleneck_spu"] == 2  # sends 300 bytes; SPU 4 receives the same, higher id
    assert cost["eta_s"] == 31.0  # 300 / 10 + one round of moves
    assert cost["bytes_moved"] == 400


def test_execution_order_waits_for_room_and_reports_a_deadlock():
    moves = [Move("t", 0, (1,), (2,), (2,), (1,), True),
             Move("t", 1, (2,), (3,), (3,), (2,), True)]
    sizes = {"t": (50, 50)}
    loads = {1: 50, 2: 60, 3: 0}
    assert execution_order(moves, sizes, loads, {2: 100}) == [1, 0]
    assert execution_order(moves, sizes, loads, {2: 100, 3: 10}) is None
    assert bytes_lower_bound({1: 100, 2: 10}, {1: 60, 2: 60}) == 40


def test_throttle_commands_name_exactly_the_moved_partitions():
    moves = [Move("orders", 3, (1, 2), (1, 5), (5,), (2,), False),
             Move("orders", 7, (2, 1), (1, 2), (), (), True)]
    commands = throttle_commands(moves, 1000)
    assert any("--entity-name 5 --alter --add-config leader.replication.throttled.rate=1000,"
               "follower.replication.throttled.rate=1000" in c for c in commands["apply"])
    [topic] = [c for c in commands["apply"] if "--entity-type topics" in c]
    assert "leader.replication.throttled.replicas=[3:1,3:2]" in topic
    assert "follower.replication.throttled.replicas=[3:5]" in topic and "7:" not in topic
    assert len(commands["remove"]) == len(commands["apply"]) == 4
    assert all("--delete-config" in c for c in commands["remove"])
