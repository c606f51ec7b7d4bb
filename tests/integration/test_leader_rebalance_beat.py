"""The automatic leader rebalancer on its own: Celery beat and a worker, no command."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cluster.adapters import hot_state
from cluster.models import Partition
from tests.helpers import register_spus, run
from tests.integration.test_replication_worker import wait_until, worker  # noqa: F401

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]
INTERVAL_S = 2.0
# Beat's first replication tick (0.5 s) shows it is up; the check runs one interval after start.
SLACK_S = 1.5


def not_preferred() -> int:
    rows = Partition.objects.filter(topic__name="t").values_list("leader", "replicas")
    return sum(leader != replicas[0] for leader, replicas in rows)


@pytest.fixture
def beat(redis_url, tmp_path: Path):
    from webapp.celery import app

    # Beat's database settings differ from the test's: name the in-process worker's queue.
    env = {**os.environ, "REDIS_URL": redis_url, "VAR_DIR": str(tmp_path),
           "LEADER_IMBALANCE_CHECK_INTERVAL_S": str(INTERVAL_S), "REPLICATION_TICK_S": "0.5",
           "CELERY_QUEUE": app.conf.task_default_queue}
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-m", "celery", "-A", "webapp", "beat", "-l",
                             "warning", "-s", str(tmp_path / "beat-schedule")], cwd=root,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    yield proc
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def after_outage(worker, settings):  # noqa: F811
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 60  # no tick runs while beat starts up
    settings.REPLICATION_SIMULATED_PRODUCERS = False
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "--partitions", "6", "--replication", "3")
    run("spu", "offline", "0")
    run("spu", "online", "0")
    assert wait_until(lambda: all(0 in r["lrs"] for r in json.loads(
        run("partition", "list", "--topic", "t", "--json"))), 15)
    assert not_preferred() == 2, "SPU 0 is the preferred leader of 2 partitions it lost"


def test_beat_and_a_worker_restore_preferred_leaders_within_one_interval(after_outage, beat):
    seen = hot_state.heartbeats()
    assert wait_until(lambda: hot_state.heartbeats() != seen, 60), "beat never ticked"
    up = time.monotonic()
    assert wait_until(lambda: not_preferred() == 0, INTERVAL_S + SLACK_S)
    print(f"preferred leaders restored {time.monotonic() - up:.1f} s after beat's first tick "
          f"(interval {INTERVAL_S} s)")
