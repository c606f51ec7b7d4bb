"""The SPU and topic controllers' reducers: operator intents folded, in offset order, into
what the engine holds, as the store's rows would read once the entries were applied."""
from __future__ import annotations

from cluster.core.replication import intents
from cluster.core.replication.controllers import (AloneChanges, SpuSpec, adoptable_alone,
                                                  alone_until, fold_spus, fold_topics,
                                                  needs_replica_sets)

HELD = SpuSpec({0: "r1", 1: "r1"}, {0: True, 1: True})


def status(spu: int, to: str) -> dict:
    return intents.spu_status(spu, "Online" if to != "Online" else "Offline", to)


def test_a_registered_spu_starts_offline_and_goes_online_with_its_status_entry():
    entries = [intents.spu_register(7, "r9", "p", "q")]
    assert fold_spus(HELD, entries) == SpuSpec({0: "r1", 1: "r1", 7: "r9"},
                                               {0: True, 1: True, 7: False})
    online = fold_spus(HELD, [*entries, status(7, "Online")])
    assert online.online[7] is True


def test_registering_an_spu_again_keeps_its_status_and_takes_the_new_rack():
    spec = fold_spus(HELD, [intents.spu_register(0, "r2", "p", "q")])
    assert spec.racks[0] == "r2" and spec.online[0] is True


def test_an_unregistered_spu_leaves_and_its_later_entries_are_passed_by():
    spec = fold_spus(HELD, [intents.spu_unregister(1, False), status(1, "Online"),
                            intents.spu_update(1, {"rack": {"from": "r1", "to": "r5"}})])
    assert spec == SpuSpec({0: "r1"}, {0: True})


def test_a_rack_change_moves_the_rack_and_an_endpoint_change_moves_nothing():
    spec = fold_spus(HELD, [intents.spu_update(0, {"rack": {"from": "r1", "to": "r2"}}),
                            intents.spu_update(1, {"public_endpoint": {"from": "a",
                                                                       "to": "b"}})])
    assert spec.racks == {0: "r2", 1: "r1"}
    assert not needs_replica_sets(HELD, spec, fold_topics([]))


def test_an_outage_changes_no_status_its_spu_status_entries_do():
    outage = intents.outage("offline", [0, 1], rack="r1")
    assert fold_spus(HELD, [outage]) == HELD
    spec = fold_spus(HELD, [outage, status(0, "Offline"), status(1, "Offline")])
    assert spec.online == {0: False, 1: False}
    assert needs_replica_sets(HELD, spec, fold_topics([]))


def test_the_held_spec_is_not_changed_by_a_fold():
    fold_spus(HELD, [intents.spu_unregister(0, True)])
    assert HELD == SpuSpec({0: "r1", 1: "r1"}, {0: True, 1: True})


def provisioned(name: str) -> dict:
    return {**intents.topic_create(name, None, {}, [[0, 1]], online=[0, 1]),
            "resolution": "Provisioned"}


def test_a_provisioned_topic_is_added_and_a_waiting_one_is_not():
    waiting = {**intents.topic_create("w", None, {}), "resolution": "InsufficientResources"}
    changes = fold_topics([provisioned("t"), waiting])
    assert changes.added == {"t"} and not changes.dropped and not changes.settings
    later = {**intents.topic_provision("w", 5, [[0, 1]], [0, 1]), "resolution": "Provisioned"}
    assert fold_topics([waiting, later]).added == {"w"}


def test_a_topic_deleted_then_created_again_is_dropped_then_read_afresh():
    changes = fold_topics([intents.topic_delete("t", 4), provisioned("t")])
    assert changes.dropped == {"t": 4} and changes.added == {"t"}
    gone = fold_topics([provisioned("t"), intents.topic_delete("t", 9)])
    assert gone.dropped == {"t": 9} and gone.added == set()


def test_settings_changes_fold_into_the_last_value_of_each_field():
    rate = [intents.topic_update("t", {"producer_rate": {"from": 0, "to": r}}) for r in (5, 9)]
    changes = fold_topics([*rate, intents.topic_update("t", {"min_lrs": {"from": 1, "to": 2},
                                                             "reason": {"from": "", "to": "x"}})])
    assert changes.settings == {"t": {"producer_rate": 9, "min_lrs": 2}}
    assert not needs_replica_sets(HELD, HELD, changes)
    assert needs_replica_sets(HELD, HELD, fold_topics([provisioned("u")]))


def test_spus_changing_status_and_topics_added_or_dropped_are_adopted_on_their_sets_alone():
    spec = fold_spus(HELD, [status(0, "Offline"), status(1, "Offline"), status(1, "Online")])
    topics = fold_topics([provisioned("u"), intents.topic_delete("v", 9)])
    alone = adoptable_alone(HELD, spec, topics, named=[0, 1])
    # SPU 1 went offline and came back: its status did not change, none of its sets moves.
    assert alone == AloneChanges({0}, {"u"}, {"v": 9})
    assert adoptable_alone(HELD, HELD, fold_topics([])) == AloneChanges()
    assert not AloneChanges()
    # A rack change reaches no set.
    rack = fold_spus(HELD, [intents.spu_update(0, {"rack": {"from": "r1", "to": "r2"}})])
    assert adoptable_alone(HELD, rack, fold_topics([]), named=[0, 1, 5]) == AloneChanges()


def test_an_spu_registered_or_forgotten_reaches_its_sets_and_those_of_every_spu_unregistered():
    """An SPU registered holds no set yet; one forgotten is dropped once no set names it; the
    engine's reconcile checks every SPU it names that is no longer registered (5, named by a
    replica map): their sets are loaded with the changing SPUs'."""
    registered = fold_spus(HELD, [intents.spu_register(7, "r9", "p", "q")])
    assert adoptable_alone(HELD, registered, fold_topics([]), named=[0, 1, 5]) == AloneChanges(
        {7, 5})
    forgotten = fold_spus(HELD, [intents.spu_unregister(1, False)])
    assert adoptable_alone(HELD, forgotten, fold_topics([]), named=[0, 1]) == AloneChanges({1})


def test_a_topic_made_again_under_its_name_needs_every_set():
    again = fold_topics([intents.topic_delete("u", 3), provisioned("u")])
    assert adoptable_alone(HELD, HELD, again) is None


def test_intents_are_adopted_alone_up_to_a_topic_made_again_under_its_name():
    delete, again = intents.topic_delete("u", 3), provisioned("u")
    others = [provisioned("t"), status(0, "Offline")]
    assert alone_until([*others, delete, status(1, "Offline"), again, delete], {"u"}) == 4
    assert alone_until([delete, again], set()) == 1  # deleted in the same window
    assert alone_until([again], {"u"}) == 0  # still replicated: nothing before it
    assert alone_until([*others, delete], {"u"}) == 3  # nothing made again: all of them
    # Made, deleted and made again within the window: up to the second making.
    assert alone_until([again, delete, again], set()) == 2
    # What is adopted up to the cut needs no set but the ones it reaches.
    cut = [*others, delete, status(1, "Offline")]
    assert adoptable_alone(HELD, fold_spus(HELD, cut), fold_topics(cut)) is not None
