"""Small performance helpers shared by the store readers and the hot state."""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building many small containers.

    Tens of thousands of small lists and tuples trigger repeated full
    collections over the whole heap; pausing makes these passes ~4x faster.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
