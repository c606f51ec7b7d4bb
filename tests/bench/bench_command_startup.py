"""The CPU a command spends starting up, beside a bare Django set-up (issue 35 item 6).

Run: .venv/bin/python tests/bench/bench_command_startup.py [rounds]
Builds a throwaway store (SQLite under a temp dir) and a private Redis, then
runs, interleaved, ``rounds`` times each (default 5):
- a bare ``django.setup()``: ``settings.configure`` with only auth and
  contenttypes on an in-memory SQLite;
- ``manage.py spu list`` and ``manage.py topic list``;
and prints the best and median user+system CPU of each child process, and the
ratio of each command to the bare set-up, with bytecode caches written (a first
round, not counted, writes them). Goal: ``spu list`` under twice the bare set-up. Figures, not assertions (DESIGN.md): the machine is shared.
"""
from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

BARE = ("import django\n"
        "from django.conf import settings\n"
        "settings.configure(INSTALLED_APPS=['django.contrib.auth', 'django.contrib.contenttypes'],"
        " DATABASES={'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': ':memory:'}})\n"
        "django.setup()\n")


def child_cpu(argv: list[str], env: dict[str, str]) -> float:
    """User+system CPU seconds of one child process run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[1:])} failed: {done.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    tmp = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    from webapp.redis_server import start_private_redis

    redis_proc, url = start_private_redis(tmp / "redis")
    env = dict(os.environ, VAR_DIR=str(tmp), REDIS_URL=url,
               DATABASE_URL=f"sqlite:///{tmp / 'bench.sqlite3'}",
               DJANGO_SETTINGS_MODULE="webapp.settings")
    # Bytecode as an installation has it: PYTHONDONTWRITEBYTECODE (set in some shells)
    # would make every run compile the project's modules again (0.1 s and more); the
    # first, uncounted round writes the caches.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    py = sys.executable
    try:
        subprocess.run([py, "manage.py", "migrate", "--noinput", "-v0"], env=env, cwd=ROOT,
                       check=True)
        runs = {"bare django.setup()": [py, "-c", BARE],
                "spu list": [py, "manage.py", "spu", "list"],
                "topic list": [py, "manage.py", "topic", "list"]}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        for argv in runs.values():
            child_cpu(argv, env)
        for _ in range(rounds):
            for name, argv in runs.items():
                cpu[name].append(child_cpu(argv, env))
        bare = min(cpu["bare django.setup()"])
        print(f"{'run':<22}{'best CPU s':>12}{'median CPU s':>14}{'best / bare':>13}")
        for name, seconds in cpu.items():
            print(f"{name:<22}{min(seconds):>12.3f}{statistics.median(seconds):>14.3f}"
                  f"{min(seconds) / bare:>13.2f}")
    finally:
        redis_proc.terminate()
        redis_proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
