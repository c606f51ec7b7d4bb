"""The LRS members brought up to date by what changed (healing/core/overlaid.py): after
every change they are the set the whole copy gives, and a run's change costs what moved."""
from __future__ import annotations

import random

from healing.core import in_lrs_changed
from healing.core.overlaid import REBASE_AT_LEAST, Overlaid, changed


def pairs(n: int) -> frozenset:
    return frozenset(("t", p, s) for p in range(n) for s in range(3))


def test_every_change_gives_the_set_the_whole_copy_gives():
    rng = random.Random(7)
    universe = sorted(pairs(2000) | frozenset(("u", p, 9) for p in range(500)))
    members, copied = pairs(2000), pairs(2000)
    kinds = set()
    for _ in range(300):
        left = frozenset(rng.sample(sorted(copied), rng.randint(0, 40)))
        joined = frozenset(p for p in rng.sample(universe, rng.randint(0, 40))
                           if p not in copied)
        members = in_lrs_changed(members, (left, joined))
        copied = (copied - left) | joined
        kinds.add(type(members).__name__)
        assert members == copied and copied == members and len(members) == len(copied)
        assert set(members) == copied
        assert all((p in members) == (p in copied) for p in rng.sample(universe, 50))
    assert kinds == {"Overlaid", "frozenset"}  # changes kept apart, and folded in once large


def test_a_change_shares_the_base_and_holds_only_what_moved():
    base = pairs(10_000)
    gone, came = ("t", 5, 1), ("t", 5, 7)
    once = changed(base, frozenset({gone}), frozenset({came}))
    assert isinstance(once, Overlaid) and once.base is base
    assert (once.added, once.removed) == ({came}, {gone})
    back = changed(once, frozenset({came}), frozenset({gone}))  # and back: nothing apart
    assert back.base is base and not back.added and not back.removed and back == base
    assert changed(once, frozenset(), frozenset()) is once  # nothing moved: the same set


def test_set_operations_read_an_overlaid_set_as_the_set_it_stands_for():
    base = pairs(10)
    members = changed(base, frozenset({("t", 0, 0)}), frozenset({("t", 0, 5)}))
    plain = (base - {("t", 0, 0)}) | {("t", 0, 5)}
    assert base - members == {("t", 0, 0)} and members - base == {("t", 0, 5)}
    assert members - plain == frozenset() and sorted(members) == sorted(plain)
    assert ("t", 0, 0) not in members and ("t", 0, 5) in members and ("t", 1, 2) in members


def test_the_changes_fold_into_a_new_base_once_they_pass_their_share():
    base = pairs(REBASE_AT_LEAST)  # 3,000 pairs: the floor of 1,000 changes decides
    left = frozenset(sorted(base)[:REBASE_AT_LEAST])
    kept = changed(base, left, frozenset())
    assert isinstance(kept, Overlaid) and len(kept.removed) == REBASE_AT_LEAST
    folded = changed(kept, frozenset({sorted(base)[-1]}), frozenset())
    assert type(folded) is frozenset and folded == base - left - {sorted(base)[-1]}
