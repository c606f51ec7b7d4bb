"""The live pages' blocks of a unit's changes (live_batches.blocks_of), found by C-level
passes, are those of every change taken one by one: topics interleaved or not."""
from __future__ import annotations

from random import Random

from cluster.adapters import live_batches
from cluster.adapters.live_batches import blocks_of
from cluster.live import BLOCK


def _changes(seed: int) -> list:
    rng = Random(seed)
    keys = [(name, i) for name in ("a", "b", "c.d") for i in range(rng.randint(0, 3 * BLOCK))]
    if rng.random() < 0.5:
        rng.shuffle(keys)
    return [(k, None) for k in keys if rng.random() < 0.3]


def test_blocks_are_those_of_every_change():
    for seed in range(200):
        changes = _changes(seed)
        assert blocks_of(changes) == {(t, i // BLOCK) for (t, i), _ in changes}, seed


def test_the_comparison_can_fail(monkeypatch):
    monkeypatch.setattr(live_batches, "BLOCK", BLOCK + 1)
    assert any(blocks_of(c) != {(t, i // BLOCK) for (t, i), _ in c}
               for c in map(_changes, range(200)))
