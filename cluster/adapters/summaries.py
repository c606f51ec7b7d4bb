"""The summaries a unit's projections read (``Saved``): the save's ``HotState.after``, and
for each set it saved as its figures (status_rows.py) a summary made when it is read,
from the figures and the set's template (steady_codec). At 100,000 busy partitions the
save made a summary for each of them, about half of its loop, where the projections read
a few thousand a tick: the mirror's slices and reservations, the HW checkpoints' turns
and the live pages' watched blocks. Their LEOs, which the reservations compare all of,
are the figures' own.

``HotState.before`` is not a view: a figured set's summary there, kept by the set cache,
is the one its last status save made, right in its logged status (which cannot move
while the set stays figured) and old in its offsets, which every reader of offsets takes
from here."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import chain
from operator import itemgetter
from typing import Any

from cluster.adapters.hot_types import HotState
from cluster.adapters.set_codec import Summary, _new_summary
from cluster.adapters.steady_codec import Figures, figured
from cluster.core.replication import Key

_LEO = itemgetter(1)  # of figures


def figured_summary(parts: tuple[Any, ...], figures: Figures) -> Summary:
    """The summary ``encode_status`` gives for a figured set (``parts``: its template,
    ``Steady.memo``): its leader at its LEO, every follower at HW."""
    hw, leo = figures[0], figures[1]
    at = parts[8]
    replicas = tuple([(s, leo if i == at else hw, hw) for i, s in enumerate(parts[7])])
    return _new_summary(Summary, (parts[3], parts[4], parts[5], hw, leo, replicas, parts[6]))


class Saved(Mapping[Key, Summary]):
    """What the unit's save summed up, by key: ``after``'s summaries, and the figured sets'
    made when read (any set whose ``raw`` holds its figures and whose template the index
    still holds: it saved them last, and nothing touched it since, or it would have been
    saved as something else). Iterates ``after``, then the sets this save figured."""

    def __init__(self, hot: HotState) -> None:
        # Read through ``hot`` (the save replaces its ``figured`` list): one view a unit,
        # made before its save.
        self._hot = hot

    @property
    def after(self) -> dict[Key, Summary]:
        return self._hot.after

    @property
    def figured(self) -> list[Key]:
        return self._hot.figured

    def __getitem__(self, key: Key) -> Summary:
        hot = self._hot
        found = hot.after.get(key)
        if found is not None:
            return found
        was = hot.raw.get(key)
        if type(was) is tuple:
            parts: Any = hot.state.steady.memo.get(key)
            if figured(parts):
                return figured_summary(parts, was)
        raise KeyError(key)

    def __iter__(self) -> Iterator[Key]:
        return chain(self.after, self.figured)

    def __len__(self) -> int:
        return len(self.after) + len(self.figured)

    def figured_leos(self) -> list[int]:
        """The LEO of each set this save figured, in ``figured``'s order (C-level)."""
        return list(map(_LEO, map(self._hot.raw.__getitem__, self.figured)))

    def leo_before(self, key: Key) -> int | None:
        """A set this save figured: its LEO as its last save left it (its figures keep it);
        None for any other set (its ``before`` says: a set whose summary is in ``after``
        had its ``raw`` written as bytes by the same save)."""
        was = self._hot.raw.get(key)
        return was[7] if type(was) is tuple and was[7] >= 0 else None
