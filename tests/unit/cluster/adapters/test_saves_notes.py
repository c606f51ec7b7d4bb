"""A load behind other processes' saves follows their notes (set_cache ``written_since``):
the sets written between two generations, or None when some lease's notes do not lead
from one to the other."""
from __future__ import annotations

from cluster.adapters.set_cache import note, written_since


def notes(*steps: tuple[str, str, list]) -> list[str]:
    return [note(before, after, keys) for before, after, keys in reversed(steps)]  # newest first


def test_the_sets_of_every_save_on_the_way_are_written():
    kept = notes(("a", "b", [("t", 1)]), ("b", "c", [("t", 2), ("u", 0)]), ("c", "d", []))
    assert written_since([kept], "a", "d") == {("t", 1), ("t", 2), ("u", 0)}
    assert written_since([kept], "b", "c") == {("t", 2), ("u", 0)}
    assert written_since([kept], "d", "d") == set()


def test_a_way_with_a_save_that_noted_nothing_is_no_way():
    kept = notes(("a", "b", [("t", 1)]), ("c", "d", [("t", 2)]))  # b -> c not noted
    assert written_since([kept], "a", "d") is None
    assert written_since([kept], "x", "d") is None  # a token older than the notes kept
    assert written_since([[]], "a", "b") is None


def test_every_lease_of_the_scope_must_lead_to_the_store():
    whole = notes(("a", "b", [("t", 1)]))
    shard = notes(("a", "z", [("t", 5)]), ("z", "b", [("t", 1)]))
    assert written_since([whole, shard], "a", "b") == {("t", 1), ("t", 5)}
    assert written_since([whole, notes(("y", "b", []))], "a", "b") is None


def test_notes_that_go_round_in_a_loop_end():
    kept = notes(("a", "b", []), ("b", "a", []))
    assert written_since([kept], "a", "c") is None
