"""Workbench speed on a 10,000-partition cluster: how soon a what-if answers.

Run: .venv/bin/python tests/bench/bench_workbench.py
A throwaway SQLite store (never var/) with 50 SPUs in 5 racks and 20 topics x
500 partitions (RF 3). Prints, for "add 3 SPUs to rack-a":
* POST /api/plans/ computed in the request (no worker): server time;
* the Celery task's body (plan_compute) with progress reporting: time and the
  number of progress reports;
* the plan page and GET /api/plans/<id>/ server times.
Figures, not assertions (DESIGN.md).
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
TMP = tempfile.mkdtemp(prefix="bench-workbench-")
os.environ["VAR_DIR"] = TMP
os.environ.pop("DATABASE_URL", None)
os.environ["LIVE_UPDATES"] = "false"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

RACKS = ["rack-a", "rack-b", "rack-c", "rack-d", "rack-e"]
RUNS = 3
BODY = {"add_spu": ["50:rack-a", "51:rack-a", "52:rack-a"]}


def build_cluster() -> None:
    from cluster.services import spu_register, topic_create

    for spu_id in range(50):
        spu_register(spu_id=spu_id, rack=RACKS[spu_id % len(RACKS)], by="bench")
    for t in range(20):
        topic_create(name=f"topic-{t:02d}", partitions=500, replication=3, by="bench")


def operator_client() -> Client:
    from django.contrib.auth import get_user_model

    from cluster.roles import make_operator

    user = get_user_model().objects.create_user("bench-op")
    make_operator(user)
    client = Client()
    client.force_login(user)
    return client


def timed(fn) -> tuple[float, object]:
    started = time.perf_counter()
    result = fn()
    return (time.perf_counter() - started) * 1000, result


def main() -> None:
    import planner.progress
    import planner.services as services

    call_command("migrate", verbosity=0)
    build_cluster()
    services.worker_running = lambda: False
    client = operator_client()
    posts = [timed(lambda: client.post("/api/plans/", BODY, content_type="application/json"))
             for _ in range(RUNS)]
    plan_id = posts[-1][1].json()["id"]
    print(f"POST /api/plans/ (10,000 partitions, in-process): median "
          f"{statistics.median(ms for ms, _ in posts):.0f} ms, worst "
          f"{max(ms for ms, _ in posts):.0f} ms; {posts[-1][1].json()['moves_total']} moves")
    reports: list[str] = []
    planner.progress.publish_progress = lambda kind, pk, state, progress, reason="": \
        reports.append(progress["stage"])
    services.worker_running = lambda: True
    services._enqueue = lambda task, record: None
    queued = client.post("/api/plans/", BODY, content_type="application/json").json()
    ms, record = timed(lambda: services.plan_compute(plan_id=queued["id"]))
    print(f"plan_compute (the Celery task's body) with progress: {ms:.0f} ms, "
          f"{len(reports)} progress reports, state {record.state}")
    for path in (f"/planner/plans/{plan_id}/", f"/api/plans/{plan_id}/"):
        times = [timed(lambda: client.get(path))[0] for _ in range(RUNS)]
        print(f"GET {path}: median {statistics.median(times):.0f} ms")


if __name__ == "__main__":
    main()
