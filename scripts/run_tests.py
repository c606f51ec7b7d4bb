"""The whole suite, in two pytest runs on parallel workers, with one closing line.

Browser tests run in a run of their own: Playwright's sync API leaves an event loop
marked running in its process for the rest of the session, and asgiref then refuses
async_to_sync there. Within one process the suite sorts browser tests last, but
pytest-xdist hands files to workers as they free up, so a worker could take an
integration file after a browser one. Two runs keep them apart whatever the schedule.

Usage: python scripts/run_tests.py [extra pytest arguments, passed to both runs;
       naming test paths runs just those, in one run]
TEST_WORKERS sets the number of workers (default 2, one per core here; 0 runs in-process).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PHASES = (["tests/unit", "tests/integration"], ["tests/browser"])
COUNTED = ("passed", "failed", "skipped", "error", "errors")


def _workers() -> list[str]:
    workers = os.environ.get("TEST_WORKERS", "2")
    if not workers.isdigit():
        sys.exit(f"TEST_WORKERS must be a whole number, not {workers!r}")
    # loadfile keeps a module's tests (and its module-scoped stacks) on one worker.
    return [] if workers == "0" else ["-n", workers, "--dist", "loadfile"]


def _counts(output: str) -> dict[str, int]:
    """The figures of pytest's closing line, e.g. '3 failed, 1314 passed in 1303.92s'."""
    closing = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
    if not closing:
        return {}
    return {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", closing[-1]) if word in COUNTED}


def _run(paths: list[str], extra: list[str]) -> tuple[int, dict[str, int]]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *_workers(), *paths, *extra]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    seen: list[str] = []
    for line in process.stdout:  # echoed as it comes: a long run shows its progress
        sys.stdout.write(line)
        sys.stdout.flush()
        seen.append(line)
    return process.wait(), _counts("".join(seen))


def main(extra: list[str]) -> int:
    totals = dict.fromkeys(("passed", "failed", "skipped"), 0)
    worst = 0
    named = [arg for arg in extra if (ROOT / arg.split("::")[0]).exists()]
    # Paths named on the command line are run as given, in one run.
    phases = ([],) if named else PHASES
    for paths in phases:
        code, counts = _run(paths, extra)
        if code == 5 and extra:  # an extra -k or path selected nothing in this phase
            code = 0
        worst = worst or code
        totals["passed"] += counts.get("passed", 0)
        totals["failed"] += counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
        totals["skipped"] += counts.get("skipped", 0)
    if worst and not totals["failed"]:
        totals["failed"] = 1  # a run that broke before counting (collection error, crash)
    print(f"suite: {totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped")
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
