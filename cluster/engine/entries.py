"""What a step appends to the metadata log: status changes of the sets it saved,
topics it started replicating, and the core's actions that a status cannot say.
(What the unit's own code logs, ``u.log``, goes into the same commit.)"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import compress, filterfalse, repeat
from operator import gt, is_, itemgetter, ne, not_, or_
from typing import Any, NamedTuple

from cluster.adapters.hot_state import HotState, Summary
from cluster.core.replication import Action, Key
from cluster.core.replication import metadata
from cluster.core.replication.metadata import Status
from cluster.core.replication.steady import Steady


class Changes(NamedTuple):
    """What the saved sets' summaries say moved."""
    moved: list[Key]    # logged status moved, or new: what the log records, rows written at once
    differs: list[Key]  # any figure moved (offsets too), ``moved`` included: the mirror's rows


def changes(before: dict[Key, Summary], after: dict[Key, Summary],
            steady: Steady | None = None,
            sets: Mapping[Key, Any] | None = None) -> Changes:
    """One pass over the saved sets' summaries (a busy tick saves every set). A logged
    status moved when the leader, LRS, resolution, epoch or replica ids did: tested inline,
    in that order, the ids by C-level maps (a call and two lists per set were a third of
    the pass).

    With the unit's ``steady`` index, the sets that stayed in it since the last save
    (``Steady.joined``) are not tested: no rule moves a logged status without taking the
    set out first, and ``before`` holds what that save summed up. Only whether their
    summary differs is, in C-level passes; the index is then marked for the next save.
    The same lists, in the same order, as without it (test_changes_steady.py).

    Where ``after`` holds ``before``'s very keys in their order (a busy tick saves every
    loaded set), the old summaries are read in place, not looked up; and with the loaded
    ``sets`` (the unit's), where ``after`` holds them all, the sets out of the index are
    its ``unsteady_keys``: none (every set steady) means none is tested, without a
    lookup per set in the index."""
    if steady is None or not steady.keys:
        found = _changes(before, after.items())
    else:
        in_place = len(before) == len(after) and all(map(is_, before, after))
        olds: list[Summary | None] = (list(before.values()) if in_place
                                      else list(map(before.get, after)))
        differs = list(compress(after, map(ne, after.values(), olds)))
        index, joined = steady.keys, steady.joined
        tested: Iterable[tuple[Key, Summary]]
        if not joined and in_place and _all_steady(steady, sets, after):
            tested = ()
        elif joined or None in olds:
            # The others, and any set ``before`` lacks (new: moved), in ``after``'s order.
            stayed = map(gt, map(index.__contains__, after), map(joined.__contains__, after))
            tested = compress(after.items(), map(or_, map(not_, stayed),
                                                 map(is_, olds, repeat(None))))
        else:  # a busy tick's: every steady set stayed, none is new
            tested = ((key, after[key]) for key in filterfalse(index.__contains__, after))
        found = Changes(_changes(before, tested).moved, differs)
    if steady is not None:
        steady.mark()
    return found


def _all_steady(steady: Steady, sets: Mapping[Key, Any] | None,
                after: dict[Key, Summary]) -> bool:
    """Every key of ``after`` is in the index: ``after`` holds every loaded set and none
    of them is out of it (the index's own count check, ``unsteady_keys``)."""
    return (sets is not None and len(sets) == len(after) == len(steady.keys)
            and not steady.unsteady_keys(sets))


def _changes(before: dict[Key, Summary], after: Iterable[tuple[Key, Summary]]) -> Changes:
    moved, differs = [], []
    get = before.get
    for key, new in after:
        old = get(key)
        if old is None:
            moved.append(key)
            differs.append(key)
        elif new != old:
            differs.append(key)
            if (old[0] != new[0] or old[1] != new[1] or old[2] != new[2] or old[6] != new[6]
                    or (old[5] is not new[5]
                        and list(map(_spu, old[5])) != list(map(_spu, new[5])))):
                moved.append(key)
    return Changes(moved, differs)


def step_entries(hot: HotState, actions: list[Action], after: dict[Key, Summary],
                 at: int) -> list[dict[str, Any]]:
    """Entries for the saved sets whose logged status moved (``hot.moved``), new topics,
    and actions."""
    why = metadata.reasons(actions)
    out: list[dict[str, Any]] = []
    for key in hot.moved:
        old, new = hot.before.get(key), after[key]
        if old is not None and key[0] not in hot.added:
            entry = metadata.partition_entry(key, Status(*old.log_status()),
                                             Status(*new.log_status()), why.get(key, ""))
            entry["topic_pk"] = hot.topics[key[0]]["pk"]
            out.append(entry)
    for name in sorted(hot.added):
        if name in hot.topics:
            sets = [hot.state.replica_sets[(name, p)]
                    for p in range(len(hot.topics[name]["partitions"]))]
            out.append({**metadata.topic_entry(name, sets), "topic_pk": hot.topics[name]["pk"]})
    out += metadata.action_entries(hot.state, actions)
    return [{**e, "at": at} for e in out]


_spu = itemgetter(0)  # of a replica's figures (spu, leo, hw)
