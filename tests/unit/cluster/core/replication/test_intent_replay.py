"""Replay folds operator intents (issue 32): what a command did shows at the moment it was
made, and the engine's own entries that follow give the same moment as without them."""
from __future__ import annotations

import pytest

from cluster.core.replication import intents
from history.core import replay as history
from cluster.core.replication.state import Resolution


def _replay(*entries: dict) -> history.Moment:
    return history.replay(history.Moment(), enumerate(entries, start=1))


def test_a_created_topic_shows_its_partitions_as_the_command_stored_them():
    entry = intents.topic_create("t", 7, {"partition_count": 2}, [[1, 2], [2, 3]], online={1, 2})
    assert entry["offline"] == [3]
    m = _replay(entry)
    assert m.statuses[("t", 0)].leader == 1 and m.statuses[("t", 0)].lrs == (1, 2)
    assert m.statuses[("t", 1)].leader == 2 and m.statuses[("t", 1)].lrs == (2,)
    assert m.statuses[("t", 1)].resolution is Resolution.ONLINE
    assert m.spus == {1: True, 2: True, 3: False}


def test_a_partition_with_no_live_replica_starts_offline_and_a_waiting_topic_has_none():
    m = _replay(intents.topic_create("t", 1, {}, [[3]], online=()),
                intents.topic_create("w", 2, {}))
    assert m.statuses[("t", 0)].leader is None
    assert m.statuses[("t", 0)].resolution is Resolution.OFFLINE
    assert not [k for k in m.statuses if k[0] == "w"]
    provisioned = history.replay(m.copy(), [(3, intents.topic_provision("w", 2, [[1]], {1}))])
    assert provisioned.statuses[("w", 0)].leader == 1


def test_an_intent_after_the_engine_adopted_the_topic_keeps_what_the_engine_logged():
    replicated = {"type": "topic-replicated", "topic": "t",
                  "statuses": [[[1, 2], 2, [2], "Online", 3]]}
    m = _replay(replicated, intents.topic_create("t", 1, {}, [[1, 2]], online={1, 2}))
    assert m.statuses[("t", 0)].leader == 2 and m.statuses[("t", 0)].epoch == 3


def test_a_deleted_topic_is_gone_and_a_config_change_moves_no_partition():
    m = _replay(intents.topic_create("t", 1, {}, [[1]], online={1}),
                intents.topic_update("t", {"producer_rate": {"from": 0, "to": 5}}))
    assert ("t", 0) in m.statuses
    m = history.replay(m, [(3, intents.topic_delete("t", 1))])
    assert m.statuses == {} and m.offset == 3


def test_spu_register_update_and_unregister_move_the_spu_and_its_rack():
    m = _replay(intents.spu_register(4, "r1", "h:1", "h:2"),
                intents.spu_update(4, {"rack": {"from": "r1", "to": "r2"}}))
    assert m.spus == {4: False} and m.racks == {4: "r2"}
    m = history.replay(m, [(3, intents.spu_update(4, {"public_endpoint": {"from": "a",
                                                                          "to": "b"}}))])
    assert m.racks == {4: "r2"}
    m = history.replay(m, [(4, intents.spu_unregister(4, forced=False))])
    assert m.spus == {} and m.racks == {}


def test_outages_take_spus_offline_kill_their_loops_and_bring_them_back():
    m = _replay(intents.spu_register(1, "a", "", ""), intents.spu_register(2, "a", "", ""),
                intents.outage("online", [1, 2]), intents.outage("offline", [1, 2], rack="a"))
    assert m.spus == {1: False, 2: False}
    m = history.replay(m, [(5, intents.outage("kill", [2])), (6, intents.outage("online", [1]))])
    assert m.spus == {1: True, 2: False} and m.killed == {2}
    m = history.replay(m, [(7, intents.outage("online", [2]))])
    assert m.killed == set() and m.spus[2] is True


def test_an_unknown_outage_action_is_refused():
    with pytest.raises(ValueError):
        intents.outage("reboot", [1])


def test_a_snapshot_of_a_moment_built_from_intents_round_trips():
    m = _replay(intents.spu_register(1, "a", "", ""),
                intents.topic_create("t", 1, {}, [[1]], online={1}),
                intents.outage("kill", [1]))
    back = history.decode(history.encode(m))
    assert (back.statuses, back.spus, back.killed, back.racks) == (
        m.statuses, m.spus, m.killed, m.racks)


def test_an_spu_status_written_by_a_service_moves_the_spu():
    m = _replay(intents.spu_register(1, "", "", ""), intents.spu_status(1, "Init", "Online"))
    assert m.spus == {1: True}
    m = history.replay(m, [(3, intents.spu_status(1, "Online", "Offline"))])
    assert m.spus == {1: False}


def test_an_spu_group_s_managed_spus_replay_as_any_registered_spu_and_name_their_group():
    made = intents.spu_register(10, "r", "g-10:9005", "g-10:9006", group="g")
    gone = intents.spu_unregister(11, forced=True, group="g")
    assert (made["group"], gone["group"]) == ("g", "g")
    assert "group" not in intents.spu_register(1, "r", "h:1", "h:2")
    m = _replay(made, intents.spu_register(11, "r", "g-11:9005", "g-11:9006", group="g"), gone)
    assert m.spus == {10: False} and m.racks == {10: "r"}


def test_a_plan_control_carries_a_pre_empting_cancel_s_reason_and_refuses_an_unknown_action():
    assert intents.plan_control("cancel", 3) == {"type": "plan-control", "action": "cancel",
                                                 "plan": 3}
    assert intents.plan_control("cancel", 3, reason="pre-empted")["reason"] == "pre-empted"
    with pytest.raises(ValueError):
        intents.plan_control("rewind", 3)
