"""Small performance helpers shared by the store readers and the hot state.

They live in the cluster app, not in webapp, so that adapters import no webapp (the
layering rule, tests/unit/webapp/test_app_layering.py).
"""
from __future__ import annotations

import gc
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

# When a process that freezes what it allocates (``gc_paused(freeze=True)``) lets the
# cyclic GC see everything again, so that cycles made meanwhile are reclaimed: once the
# frozen objects are a quarter more than the fewest seen since the last thaw (the rule
# CPython uses to space its own full collections), and THAW_MIN_OBJECTS more at least.
# Replaced objects are freed by reference counting and leave the frozen generation, so
# a steady engine's count stays put; what only the collector frees makes it grow. A thaw
# is a full collection, 4 s of a worker holding 100,000 replica sets. The frozen objects
# are measured by the blocks the allocator gives out (``sys.getallocatedblocks``: under a
# millisecond there), which grow and shrink with them: counting them
# (``gc.get_freeze_count``) walks the frozen list, 180-190 ms for the 3.7 million
# objects of a process holding 100,000 sets, once every THAW_CHECK_S in whichever unit.
THAW_GROWTH = 0.25
THAW_MIN_OBJECTS = 100_000
THAW_CHECK_S = 30.0
# A loaded server's young-generation threshold (CPython's is 700): a collection when this
# many more containers live than when the last one ran. With the loaded code frozen, the
# long-lived generation is small (20,000 objects), so CPython's rule (a full collection once
# a quarter of that was promoted) ran one every ten requests or so, whatever the request,
# as the young collections promoted whatever a page held at that moment: 35-90 ms of wall
# time each while the engine stepped on 2 cores (issue 33, bench_pages.py, "GC gen 2").
# A page's objects die with it (reference counting; its rendered context is no cycle any
# more, webapp/template_backend.py), so at this threshold only what cycles leave behind
# (50-200 objects a request) accumulates to a young collection, every few dozen requests,
# which scans about this many: 10 ms at most in a stepping run. At 20,000 the collections
# were rarer but one took 147 ms; at 700 they promoted pages' live objects, as above.
SERVER_YOUNG_THRESHOLD = 5_000
_checked = time.monotonic()
_fewest: int | None = None  # allocated blocks, the fewest counted since the last thaw


@contextmanager
def gc_paused(*, freeze: bool = False) -> Iterator[None]:
    """Pause the cyclic GC while building many small containers.

    Tens of thousands of small lists and tuples trigger repeated full
    collections over the whole heap; pausing makes these passes ~4x faster.

    ``freeze``: for the engine's units of work, whose objects (the replica sets the
    set cache keeps, their logs and summaries) live from one tick to the next and hold
    no cycles. Re-enabling the GC after building them made the next collections scan
    them all, tick after tick: a fifth of a busy tick's CPU at 10,000 partitions. Frozen
    (``gc.freeze``), collections skip them; reference counting still frees them as
    usual, and ``thaw_if_due`` hands them back to the GC when they grew, for cycles.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if enabled:
            gc.enable()


def thaw_if_due(now: float | None = None) -> bool:
    """Unfreeze and collect everything once the frozen objects grew enough, reclaiming
    the cycles they took part in. Call it outside any lease: the collection scans the
    whole heap. Returns whether it ran."""
    global _checked, _fewest
    now = time.monotonic() if now is None else now
    if not gc.isenabled() or now - _checked < THAW_CHECK_S:
        return False
    _checked = now
    frozen = sys.getallocatedblocks()
    if _fewest is None or frozen < _fewest:
        _fewest = frozen
    if frozen <= _fewest * (1 + THAW_GROWTH) + THAW_MIN_OBJECTS:
        return False
    gc.unfreeze()
    gc.collect()
    _fewest = None
    return True


def freeze_loaded() -> int:
    """For a server process once its code is loaded: collect, then freeze what is left.

    What a web process loads (Django, the apps, the URL conf and every view's imports,
    about 150,000 objects) lives as long as the process; each full collection walked it
    all: 100-300 ms of whichever request it fell on while the engine kept a 2-core machine
    busy, the p99 of pages that take 20-60 ms (issue 33, ``bench_pages.py --stepping``).
    Frozen, collections skip it; and young collections wait for SERVER_YOUNG_THRESHOLD
    containers, so what a request holds is freed before any collection sees it. Returns
    how many objects are frozen."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018  (the views' modules, imported now)
    gc.collect()
    gc.freeze()
    gc.set_threshold(SERVER_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    return gc.get_freeze_count()
