"""What a step appends to the metadata log: status changes of the sets it saved,
topics it started replicating, and the core's actions that a status cannot say.
(What the unit's own code logs, ``u.log``, goes into the same commit.)"""
from __future__ import annotations

from operator import itemgetter
from typing import Any, NamedTuple

from cluster.adapters.hot_state import HotState, Summary
from cluster.core.replication import Action, Key
from cluster.core.replication import metadata
from cluster.core.replication.metadata import Status


class Changes(NamedTuple):
    """What the saved sets' summaries say moved."""
    moved: list[Key]    # logged status moved, or new: what the log records, rows written at once
    differs: list[Key]  # any figure moved (offsets too), ``moved`` included: the mirror's rows


def changes(before: dict[Key, Summary], after: dict[Key, Summary]) -> Changes:
    """One pass over the saved sets' summaries (a busy tick saves every set). A logged
    status moved when the leader, LRS, resolution, epoch or replica ids did: tested inline,
    in that order, the ids by C-level maps (a call and two lists per set were a third of
    the pass)."""
    moved, differs = [], []
    get = before.get
    for key, new in after.items():
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
