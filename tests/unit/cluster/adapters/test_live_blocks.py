"""The live pages' staging of a unit's changes (live_batches): the blocks found by C-level
passes (``blocks_of``) are those of every change taken one by one, and what a unit's
``Changed`` (keys, and summaries read by key) stages is what the same changes staged as
(key, summary) pairs, set by set, stage: topics interleaved or not, watched blocks or
none, moved sets or none. Inside a transaction the summaries are taken at the publish."""
from __future__ import annotations

import json
from collections import defaultdict
from random import Random

import pytest

from cluster.adapters import live_batches
from cluster.adapters.live_batches import (CLUSTER_GROUP, LOAD_MARK, Changed, _row_json,
                                           blocks_of, publish_partitions)
from cluster.adapters.set_codec import Summary
from cluster.core.replication import Resolution
from cluster.live import BLOCK


def _changes(seed: int) -> list[tuple[tuple[str, int], Summary]]:
    rng = Random(seed)
    keys = [(name, i) for name in ("a", "b", "c.d") for i in range(rng.randint(0, 3 * BLOCK))]
    if rng.random() < 0.5:
        rng.shuffle(keys)
    return [(k, Summary(rng.choice((1, None)), (1,), Resolution.ONLINE, k[1], k[1],
                        ((1, k[1], k[1]),), 0)) for k in keys if rng.random() < 0.3]


def _reference(changes, moved, seen) -> dict[str, dict[str, str]]:
    """The staging rule, pair by pair."""
    groups = {b: f"topic-{b[0]}.{b[1]}" for b in {(t, i // BLOCK) for (t, i), _ in changes}}
    watched = {b: g for b, g in groups.items() if g in seen}
    if not watched and not moved:
        return {}
    by_group: dict[str, dict[str, str]] = defaultdict(dict)
    cluster = {}
    for (topic, index), summary in changes:
        group = watched.get((topic, index // BLOCK))
        if group is None and (topic, index) not in moved:
            continue
        row = _row_json(json.dumps(topic), index, summary)
        if group is not None:
            by_group[group][f"p:{topic}/{index}"] = row
        if (topic, index) in moved:
            cluster[f"p:{topic}/{index}"] = row
    if moved:
        cluster[LOAD_MARK] = "1"
        by_group[CLUSTER_GROUP] = cluster
    return by_group


def _stage(monkeypatch, changes, moved, seen) -> dict[str, dict[str, str]]:
    staged: list = []
    monkeypatch.setattr(live_batches, "watched", lambda groups: seen)
    monkeypatch.setattr(live_batches, "_stage_fields",
                        lambda fields, _, loads: staged.append(dict(fields)))
    live_batches._stage_changed(Changed([k for k, _ in changes], dict(changes)), moved)
    return staged[0] if staged else {}


def test_blocks_are_those_of_every_change():
    for seed in range(200):
        changes = _changes(seed)
        assert blocks_of([k for k, _ in changes]) == {(t, i // BLOCK) for (t, i), _ in changes}


def test_a_units_changes_stage_what_their_pairs_stage(monkeypatch):
    staged = 0
    for seed in range(200):
        changes, rng = _changes(seed), Random(seed)
        moved = {k for k, _ in changes if rng.random() < 0.05}
        seen = {f"topic-{t}.{b}" for t in ("a", "b", "c.d") for b in range(3)
                if rng.random() < 0.3}
        got = _stage(monkeypatch, changes, moved, seen)
        assert got == _reference(changes, moved, seen), f"seed={seed}"
        staged += sum(map(len, got.values()))
    assert staged > 1000


def test_the_comparison_can_fail(monkeypatch):
    monkeypatch.setattr(live_batches, "BLOCK", BLOCK + 1)
    assert any(blocks_of([k for k, _ in c]) != {(t, i // BLOCK) for (t, i), _ in c}
               for c in map(_changes, range(200)))
    with pytest.raises(AssertionError, match="seed="):
        test_a_units_changes_stage_what_their_pairs_stage(monkeypatch)


def test_inside_a_transaction_the_summaries_are_the_publishs(monkeypatch):
    """Staged at the outer commit, maybe after later units changed the summaries' dict."""
    class Atomic:
        in_atomic_block = True

    later: list = []
    monkeypatch.setattr(live_batches.transaction, "get_connection", lambda: Atomic())
    monkeypatch.setattr(live_batches.transaction, "on_commit", later.append)
    changes = _changes(1)
    summaries = dict(changes)
    publish_partitions(Changed(list(summaries), summaries), moved=[changes[0][0]])
    want = _reference(changes, {changes[0][0]}, set())
    summaries.update((k, s._replace(hw=s.hw + 1)) for k, s in changes)
    staged: list = []
    monkeypatch.setattr(live_batches, "watched", lambda groups: set())
    monkeypatch.setattr(live_batches, "_stage_fields",
                        lambda fields, _, loads: staged.append(dict(fields)))
    later[0]()
    assert staged == [want]
