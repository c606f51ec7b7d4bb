"""History's retention (issue 21): snapshots past HISTORY_RETENTION_S go except the newest
of them, where history begins; the log's trim keeps every entry history replays."""
from __future__ import annotations

import time

import pytest

from cluster.adapters import metadata_log
from cluster.adapters.redis_keys import bound_to_store
from history import checkpoints
from history.models import Snapshot
from history.selectors import history_bounds
from history.services import snapshot_prune, snapshot_take
from tests.helpers import refused, register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def test_old_snapshots_go_history_begins_at_the_newest_expired_and_trim_keeps_its_entries(
        redis_url, settings):
    checkpoints.forget()
    register_spus(0, 1, rack="r", online=True)
    run("topic", "create", "t", "-p", "2", "-r", "2")
    first = snapshot_take()
    run("spu", "offline", "1")
    second = snapshot_take()
    run("spu", "online", "1")
    assert first.offset < second.offset and snapshot_take() is not None

    settings.HISTORY_RETENTION_S = 60
    later = int(time.time() * 1000) + 3_600_000  # an hour on: all three are past retention
    assert snapshot_prune(now_ms=later) == 2
    newest = Snapshot.objects.get()
    assert history_bounds()["begins"]["offset"] == newest.offset

    with bound_to_store():
        metadata_log.trim(applied=10**9, retention=0)
        assert metadata_log.start() == newest.offset + 1  # nothing after the snapshot went
    error = refused("history", "at", "--offset", str(first.offset))
    assert f"history begins at offset {newest.offset}" in str(error)
    assert run("history", "at", "--offset", str(newest.offset), "--json").startswith("[")
