"""The GC pause helpers, re-exported: they live in cluster/perf.py (adapters import no
webapp); code that still imports them from here gets the same functions."""
from cluster.perf import gc_paused, thaw_if_due

__all__ = ["gc_paused", "thaw_if_due"]
