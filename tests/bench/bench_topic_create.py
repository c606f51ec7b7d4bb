"""Creating a topic of 100,000 partitions, stored and as a dry run.

Run: .venv/bin/python tests/bench/bench_topic_create.py [postgres]
Builds a throwaway store (SQLite under a temp dir; ``postgres`` a throwaway
database on 127.0.0.1:5432) with 200 SPUs in 5 racks, all online, and a
private Redis; then times, wall and CPU:
- ``topic_create`` of 100,000 partitions, RF 3, through the service (3 topics);
- ``topic create --dry-run --json`` for 100,000 partitions in-process
  (``call_command``), and as a subprocess less the start-up of a command that
  answers at once (``topic describe`` of a missing topic), 5 of each interleaved,
  wall and CPU (the best of each: the machine is shared).
Goals (issue 22): stored under 3 s on PostgreSQL; dry run under 0.3 s beyond
start-up. Figures, not assertions (DESIGN.md).
"""
from __future__ import annotations

import io
import logging
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))
from _django import setup_bench_store  # noqa: E402
TMP = Path(tempfile.mkdtemp(prefix="bench-create-"))
RACKS = ["rack-a", "rack-b", "rack-c", "rack-d", "rack-e"]
SIZE = 100_000


def setup(postgres: bool) -> object:
    return setup_bench_store(TMP, postgres, "create")


def timed(label: str, call, runs: int) -> None:
    wall, cpu = [], []
    for run in range(runs):
        start, cpu_start = time.perf_counter(), time.process_time()
        call(run)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - cpu_start)
    print(f"{label:<52} median {statistics.median(wall):6.2f} s  best {min(wall):6.2f} s  "
          f"CPU median {statistics.median(cpu):6.2f} s", flush=True)


def subprocess_seconds(*args: str) -> tuple[float, float]:
    """A management command's wall and CPU (user + system) seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT,
                   capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def drop_database() -> None:
    """Drop the throwaway database, closing the sessions the live batches' flush thread
    left open in it (destroy_test_db refused: "being accessed by other users")."""
    from django.db import connection
    logging.getLogger("cluster.adapters.live_batches").setLevel(logging.CRITICAL)
    name = connection.settings_dict["NAME"]
    connection.close()
    with connection._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {connection.ops.quote_name(name)} WITH (FORCE)")


def main() -> None:
    postgres = sys.argv[1:] == ["postgres"]
    redis_proc = setup(postgres)
    try:
        from django.core.management import call_command
        from django.db import connection

        from cluster.core.spus import SpuResolution
        from cluster.services import spu_register, topic_create
        from cluster.services.spus import spu_set_resolution

        for spu in range(200):
            spu_register(spu_id=spu, rack=RACKS[spu % len(RACKS)], by="bench")
            spu_set_resolution(spu_id=spu, resolution=SpuResolution.ONLINE, by="bench")
        print(f"200 SPUs in 5 racks, all online ({connection.vendor}); load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
        timed(f"topic_create, {SIZE:,} partitions, RF 3 (stored)",
              lambda run: topic_create(name=f"big-{run}", partitions=SIZE, replication=3,
                                       by="bench"), 3)
        args = ["topic", "create", "dry", "--partitions", str(SIZE), "--replication", "3",
                "--dry-run", "--json"]
        timed(f"topic create --dry-run --json, {SIZE:,} (in-process)",
              lambda run: call_command(*args, stdout=io.StringIO()), 5)
        # Interleaved, so both commands see the same load; the best of each is the least
        # disturbed by the other processes sharing the CPUs (medians differed by +-0.5 s).
        dry, refused = [], []
        for _ in range(5):
            dry.append(subprocess_seconds(*args))
            refused.append(subprocess_seconds("topic", "describe", "no-such-topic"))
        for label, runs in (("topic create --dry-run --json as a command", dry),
                            ("`topic describe` of a missing topic (start-up)", refused)):
            print(f"{label:<52} median {statistics.median(w for w, _ in runs):6.2f} s  best "
                  f"{min(w for w, _ in runs):6.2f} s  CPU best {min(c for _, c in runs):6.2f} s")
        print(f"dry run beyond start-up: wall (best less best) "
              f"{min(w for w, _ in dry) - min(w for w, _ in refused):.2f} s, CPU (best less "
              f"best) {min(c for _, c in dry) - min(c for _, c in refused):.2f} s")
        print(f"load average {os.getloadavg()[0]:.1f}")
    finally:
        if postgres:
            drop_database()
        redis_proc.terminate()
        redis_proc.wait(10)
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
