"""How fast a plan is being carried out, and when it should finish.

``copy_rate`` is the average so far (the page's "copy rate so far"). The estimated
finish uses a smoothed pace instead (``Pace``), sampled by the executor whenever its
counts change:

- an exponentially weighted rate of moves (and of bytes). The weight of a sample
  grows with the time it covers (half of the rate is the last ``HALF_LIFE_S``), so
  ticks that come often or seldom weigh the same per second. Early on the rate is
  divided by the weight gathered so far, which makes it the plain average since the
  start (as before) and lets it settle into the weighted rate as the run goes on;
- the finish moment that rate gives, smoothed the same way. Moves land one at a time,
  so the rate alone still steps at every landing; the moment moves only a share of each
  step, and between samples the estimate counts down instead of growing while no move
  lands (the average so far did both: a saw-tooth).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

# Half of the smoothed rate is the last this many seconds: long enough to steady the
# estimate over moves that land one by one, short enough to follow a new throttle.
HALF_LIFE_S = 30.0


class Pace(NamedTuple):
    """The counts at the last sample and the weighted rates up to it (``weight``: how much
    of the rate the samples so far make up, 0 to 1)."""
    at_ms: int
    moves_done: int
    bytes_copied: int
    moves_rate: float = 0.0
    bytes_rate: float = 0.0
    weight: float = 0.0
    # The smoothed estimated finish (ms) as of ``at_ms``; None until a move landed.
    finish_ms: float | None = None
    # Held since ``at_ms`` (the plan paused): the time until it runs again is no pace.
    held: bool = False

    @property
    def moves_per_s(self) -> float | None:
        return self.moves_rate / self.weight if self.weight > 0 else None

    @property
    def bytes_per_s(self) -> float | None:
        return self.bytes_rate / self.weight if self.weight > 0 else None

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any] | None) -> Pace | None:
        """The stored pace, or None for an execution that has none yet (nor a bad one)."""
        try:
            return cls(**stored) if stored else None
        except TypeError:
            return None


def pace_started(at_ms: int) -> Pace:
    return Pace(at_ms, 0, 0)


def _share(elapsed_s: float, half_life_s: float) -> float:
    """How much of a smoothed value a sample covering ``elapsed_s`` replaces."""
    return 1 - 0.5 ** (max(0.0, elapsed_s) / half_life_s)


def _finish_at(pace: Pace, moves_total: int) -> float | None:
    """The finish the smoothed rate gives at the pace's sample, before smoothing it."""
    per_s = pace.moves_per_s
    if not per_s:
        return None
    return pace.at_ms + 1000 * (moves_total - pace.moves_done) / per_s


def held_pace(pace: Pace | None, *, now_ms: int) -> Pace | None:
    """The pace of a plan that stopped starting moves (paused): kept as it is, from now."""
    if pace is None or pace.held:
        return pace
    return pace._replace(at_ms=now_ms, held=True)


def next_pace(pace: Pace | None, *, moves_done: int, bytes_copied: int, moves_total: int,
              now_ms: int, half_life_s: float = HALF_LIFE_S) -> Pace:
    """The pace with one more sample: the counts now, at ``now_ms``. The first sample after
    a hold starts afresh from the counts now and moves the finish on by the time held."""
    if pace is None:
        return Pace(now_ms, moves_done, bytes_copied)
    if pace.held:
        held_s = max(0, now_ms - pace.at_ms)
        finish = None if pace.finish_ms is None else pace.finish_ms + held_s
        return pace._replace(at_ms=now_ms, moves_done=moves_done, bytes_copied=bytes_copied,
                             finish_ms=finish, held=False)
    elapsed_s = (now_ms - pace.at_ms) / 1000
    if elapsed_s <= 0:
        return pace  # the next sample covers these counts with the time they took
    share = _share(elapsed_s, half_life_s)
    moves = (moves_done - pace.moves_done) / elapsed_s
    copied = (bytes_copied - pace.bytes_copied) / elapsed_s
    new = Pace(now_ms, moves_done, bytes_copied,
               pace.moves_rate + share * (moves - pace.moves_rate),
               pace.bytes_rate + share * (copied - pace.bytes_rate),
               pace.weight + share * (1 - pace.weight))
    finish = _finish_at(new, moves_total)
    if finish is not None and pace.finish_ms is not None:
        finish = pace.finish_ms + share * (finish - pace.finish_ms)
    return new._replace(finish_ms=finish)


def steady_eta_s(pace: Pace | None, *, moves_total: int, now_ms: int,
                 bytes_left: int | None = None, rate: int | None = None) -> float | None:
    """Seconds a running execution still needs: to the smoothed finish, carried on to
    ``now_ms`` as the next sample would; the byte throttle bounds it from below (what is
    left cannot copy faster than the rate). None before anything could be measured."""
    guesses = []
    target = _finish_at(pace, moves_total) if pace is not None else None
    if pace is not None and pace.finish_ms is not None and target is not None:
        since_s = (now_ms - pace.at_ms) / 1000
        finish = pace.finish_ms + _share(since_s, HALF_LIFE_S) * (target - pace.finish_ms)
        guesses.append(max(0.0, (finish - now_ms) / 1000))
    if rate and bytes_left:
        guesses.append(bytes_left / rate)
    return round(max(guesses), 1) if guesses else None


def copy_rate(copied: int, elapsed_s: float | None) -> float | None:
    """Bytes per second copied so far (None before anything could be measured)."""
    if not elapsed_s or elapsed_s <= 0:
        return None
    return round(copied / elapsed_s, 1)


def eta_s(*, moves_done: int, moves_total: int, elapsed_s: float | None,
          bytes_left: int | None = None, rate: int | None = None) -> float | None:
    """Seconds a running execution still needs at its average pace so far; the byte
    throttle bounds it from below. Grows while no move lands: the page uses
    ``steady_eta_s``, this is the fallback for an execution without a stored pace."""
    guesses = []
    if moves_done and elapsed_s and elapsed_s > 0:
        guesses.append(elapsed_s * (moves_total - moves_done) / moves_done)
    if rate and bytes_left:
        guesses.append(bytes_left / rate)
    return round(max(guesses), 1) if guesses else None
