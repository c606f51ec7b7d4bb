"""A manage.py command loads only what it uses (issue 35 item 6): no Twisted (daphne's
app) and no Celery until it sends a task; the task it sends goes to the configured app."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from composition.startup import store_only_command

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
from cluster.engine.engine import current
loaded = {m: m in sys.modules for m in ("twisted", "daphne", "celery", "cluster.tasks")}
real = current().scheduler._loaded()  # what the first follow-up sent does
from celery import current_app
from django.conf import settings
print(json.dumps({"before": loaded, "app": current_app.main,
                  "broker": current_app.conf.broker_url == settings.REDIS_URL,
                  "installed": type(real).__name__}))
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


# Rows written straight into the store: listing them needs neither Redis nor the engine.
ROWS = """
from cluster.models import Partition, Spu, SpuGroup, Topic
group = SpuGroup.objects.create(name="main", replicas=1, min_id=10)
Spu.objects.create(id=1, rack="rack-a")
Spu.objects.create(id=10, group=group)
topic = Topic.objects.create(name="payments", partitions=1, replication_factor=2,
                             replica_map=[[1, 10]])
Partition.objects.create(topic=topic, index=0, replicas=[1, 10], initial_leader=1, leader=1)
"""
# manage.py as its command line runs it, then what it loaded of the engine's dependencies
# and which scheduler the services would send follow-ups through (wired or not).
RUN = """
import json, sys
sys.argv = ["manage.py", *sys.argv[1:]]
import manage
heavy = ("redis", "celery", "twisted", "daphne", "prometheus_client", "cluster.engine",
         "cluster.adapters.hot_state", "cluster.services", "cluster.core.replication.events",
         "planner.core.planner")
try:
    manage.main()
finally:
    modules = sorted(m for m in heavy if m in sys.modules)  # before the probe loads more
    try:
        from cluster.engine.engine import current
        installed = type(current().scheduler).__name__
    except RuntimeError:  # not wired
        installed = None
    print("LOADED " + json.dumps({"modules": modules,
                                  "scheduler": installed}))
"""


def _run(*args: str, tmp_path: Path) -> tuple[int, str, dict]:
    env = dict(os.environ, VAR_DIR=str(tmp_path), REDIS_URL="redis://127.0.0.1:1/15",
               DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    done = subprocess.run([sys.executable, "-c", RUN, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    out, loaded = done.stdout.rsplit("LOADED ", 1)
    return done.returncode, out, json.loads(loaded)


def _listed(*args: str, tmp_path: Path) -> object:
    code, out, loaded = _run(*args, tmp_path=tmp_path)
    assert code == 0
    assert loaded["modules"] == [], f"{' '.join(args)} loaded {loaded['modules']}"
    return json.loads(out)


def test_listing_commands_start_without_the_engine_and_still_list_the_rows(tmp_path):
    _manage("migrate", "-v0", tmp_path=tmp_path)
    _manage("shell", "-c", ROWS, tmp_path=tmp_path)
    spus = _listed("spu", "list", "--json", tmp_path=tmp_path)
    assert [(s["id"], s["rack"], s["group"]) for s in spus] == [(1, "rack-a", None),
                                                              (10, None, "main")]
    topics = _listed("topic", "list", "--json", tmp_path=tmp_path)
    assert [(t["name"], t["partition_count"]) for t in topics] == [("payments", 1)]
    assert _listed("topic", "describe", "payments", "--json", tmp_path=tmp_path)["name"] \
        == "payments"
    assert [g["name"] for g in _listed("spg", "list", "--json", tmp_path=tmp_path)] == ["main"]


def test_an_action_that_changes_the_cluster_still_wires_the_engine(tmp_path):
    _manage("migrate", "-v0", tmp_path=tmp_path)
    # An SPU that does not exist: refused by the service (exit 2), the engine wired first.
    code, _out, loaded = _run("spu", "unregister", "99", tmp_path=tmp_path)
    assert code == 2
    assert "cluster.services" in loaded["modules"]
    assert loaded["scheduler"] == "CelerySchedulerOnFirstUse"


def test_only_a_row_reading_action_in_its_place_skips_the_wiring():
    assert store_only_command(["/x/manage.py", "spu", "list"])
    assert store_only_command(["manage.py", "topic", "describe", "list"])
    assert not store_only_command(["manage.py", "spu", "offline", "3"])
    assert not store_only_command(["manage.py", "spu", "--json", "list"])
    assert not store_only_command(["manage.py", "list", "spu"])
    assert not store_only_command(["pytest", "spu", "list"])
    assert not store_only_command(["manage.py", "spu"])
