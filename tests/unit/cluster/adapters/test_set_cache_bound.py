"""The set cache keeps a store of a million sets between units: bounded at 400,000, a
process stepping 1,000,000 partitions whole started over after every unit and read and
decoded every set at each tick (37 s a tick). Past MAX_SETS in all it still starts over."""
from __future__ import annotations

from cluster.adapters import set_cache
from cluster.adapters.set_cache import SetCache


class _Sized:
    def __init__(self, sets: int):
        self.sets = sets

    def size(self) -> int:
        return self.sets


def test_an_image_of_a_million_sets_is_kept():
    cache = SetCache()
    cache.images[("store", ("lock",))] = _Sized(1_000_000)  # type: ignore[assignment]
    cache._bound_size()
    assert list(cache.images) == [("store", ("lock",))]


def test_images_past_the_bound_in_all_start_over():
    cache = SetCache()
    for n in range(3):
        cache.images[(f"store-{n}", ("lock",))] = _Sized(  # type: ignore[assignment]
            set_cache.MAX_SETS // 2)
    cache._bound_size()
    assert cache.images == {}
