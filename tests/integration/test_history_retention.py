"""History's retention (issue 21): snapshots past HISTORY_RETENTION_S go except the newest
of them, where history begins; the log's trim keeps every entry history replays."""
from __future__ import annotations

import time

import pytest

from cluster.adapters import metadata_log
from cluster.ports import bound_to_store
from cluster.engine.engine import current as engine
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
        metadata_log.trim(applied=10**9, retention=0, floor=engine().floor())
        assert metadata_log.start() == newest.offset + 1  # nothing after the snapshot went
    error = refused("history", "at", "--offset", str(first.offset))
    assert f"history begins at offset {newest.offset}" in str(error)
    assert run("history", "at", "--offset", str(newest.offset), "--json").startswith("[")


def test_the_log_cap_wins_over_the_retention_and_the_page_says_history_begins_later(
        redis_url, settings, client, django_user_model):
    from cluster.roles import make_viewer

    checkpoints.forget()
    register_spus(0, 1, rack="r", online=True)
    run("topic", "create", "t", "-p", "2", "-r", "2")
    first = snapshot_take()
    run("spu", "offline", "1")
    second = snapshot_take()
    run("spu", "online", "1")
    with bound_to_store():
        head = metadata_log.head()
    # Young snapshots (7-day retention), but the first lies more than the cap behind the head.
    settings.HISTORY_LOG_MAX_ENTRIES = head - second.offset
    settings.HISTORY_SNAPSHOT_ENTRIES = 1
    assert snapshot_prune() == 1
    assert list(Snapshot.objects.values_list("offset", flat=True)) == [second.offset]
    bounds = history_bounds()
    assert bounds["capped"] and bounds["begins"]["offset"] == second.offset
    with bound_to_store():
        metadata_log.trim(applied=10**9, retention=0, floor=engine().floor())
        assert metadata_log.start() == second.offset + 1
    assert first.offset < second.offset

    user = django_user_model.objects.create_user("cap-viewer", password="x-cap-123")
    make_viewer(user)
    client.force_login(user)
    page = client.get("/history/").content.decode()
    assert "history begins later because the log is capped" in page

    settings.HISTORY_LOG_MAX_ENTRIES = 10**9  # uncapped: the same snapshot is no longer "capped"
    assert not history_bounds()["capped"]
