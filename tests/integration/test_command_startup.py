"""A manage.py command loads only what it uses (issue 35 item 6): no Twisted (daphne's
app) and no Celery until it sends a task; the task it sends goes to the configured app."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
from cluster.adapters import scheduler
loaded = {m: m in sys.modules for m in ("twisted", "daphne", "celery", "cluster.tasks")}
app = scheduler.scheduler()._loaded()  # what the first follow-up sent does
from celery import current_app
from django.conf import settings
print(json.dumps({"before": loaded, "app": current_app.main,
                  "broker": current_app.conf.broker_url == settings.REDIS_URL,
                  "installed": type(scheduler.scheduler()).__name__}))
"""


def _manage(*args: str, tmp_path: Path) -> str:
    env = dict(os.environ, VAR_DIR=str(tmp_path),
               DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_command_loads_neither_twisted_nor_celery_until_it_sends_a_task(tmp_path):
    out = json.loads(_manage("shell", "-c", PROBE, tmp_path=tmp_path).strip().splitlines()[-1])
    assert out["before"] == {"twisted": False, "daphne": False, "celery": False,
                             "cluster.tasks": False}
    assert out["app"] == "webapp" and out["broker"] and out["installed"] == "CeleryScheduler"


def test_runserver_is_still_daphnes(tmp_path):
    out = _manage("runserver", "--help", tmp_path=tmp_path)
    assert "--websocket_handshake_timeout" in out  # daphne's runserver, not Django's
