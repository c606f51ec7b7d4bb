"""Two installations on one Redis database: each one's worker consumes its own queue only.

Real processes: the settings as each installation's processes read them, and a
Celery worker started the way scripts/run.py starts it (no queue flag)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

pytestmark = [pytest.mark.redis]
ROOT = Path(__file__).resolve().parents[2]


def installation_env(var: Path, redis_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_QUEUE")}
    return {**env, "VAR_DIR": str(var), "REDIS_URL": redis_url,
            "DATABASE_URL": f"sqlite:///{var / 'db.sqlite3'}",
            "DJANGO_SETTINGS_MODULE": "webapp.settings", **extra}


def queue_of(env: dict[str, str]) -> str:
    """The default queue as that installation's processes configure Celery."""
    code = "from webapp.celery import app; print(app.conf.task_default_queue)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=60, check=True)
    return done.stdout.strip()


def test_two_installations_get_two_queues_and_celery_queue_overrides(tmp_path, redis_url):
    a = queue_of(installation_env(tmp_path / "a", redis_url))
    b = queue_of(installation_env(tmp_path / "b", redis_url))
    assert a != b and a.startswith("control-room-") and b.startswith("control-room-")
    assert queue_of(installation_env(tmp_path / "a", redis_url)) == a
    assert queue_of(installation_env(tmp_path / "b", redis_url, CELERY_QUEUE="shop-1")) == "shop-1"


def wait_until(check, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return check()


def test_a_worker_leaves_another_installations_tasks_in_its_queue(tmp_path, redis_url):
    from celery import Celery

    env_a = installation_env(tmp_path / "a", redis_url)
    (tmp_path / "a").mkdir()
    theirs, ours = queue_of(installation_env(tmp_path / "b", redis_url)), queue_of(env_a)
    sender = Celery("sender", broker=redis_url, set_as_current=False)
    client = redis.Redis.from_url(redis_url)
    worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "webapp", "worker",
                               "--pool", "solo", "-l", "warning"], cwd=ROOT, env=env_a,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # An unregistered task name: a worker that takes the message discards it.
        sender.send_task("installation.probe", queue=theirs)
        sender.send_task("installation.probe", queue=ours)
        assert client.llen(theirs) == 1 and client.llen(ours) == 1
        assert wait_until(lambda: client.llen(ours) == 0, 90), "the worker never took its task"
        # The worker has been consuming as long as it took to drain its own queue.
        assert client.llen(theirs) == 1
    finally:
        worker.terminate()
        worker.wait(30)
        sender.close()
        client.close()
