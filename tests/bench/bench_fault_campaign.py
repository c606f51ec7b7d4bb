"""A random fault campaign against the real `make run` stack; prints what it cost.

scripts/run.py runs with its private, append-only Redis in a throwaway VAR_DIR.
One acks=all producer per partition writes through the API while faults,
drawn from a seeded random schedule, hit the stack: SPU outages, an SPU loop
killed, the Celery worker killed (SIGKILL) or paused past its lease
(SIGSTOP/SIGCONT), Redis killed (the supervisor restarts it from its file).
At the end every acknowledged record must read back at its offset with its
value. Prints records acknowledged, lost (goal 0), the longest stall without
an acknowledgement, and whether every process stopped. Run:
    .venv/bin/python tests/bench/bench_fault_campaign.py [--seconds 90] [--seed 9]
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.stack import ProducerReport, Stack, lost_records, produce_until  # noqa: E402

TOPIC = "campaign"
PARTITIONS = 3
LEASE_S = 3.0


def spu_outage(stack: Stack, rng: random.Random) -> str:
    spu = rng.randrange(12)
    stack.api("POST", f"spus/{spu}/offline/")
    time.sleep(rng.uniform(2, 5))
    stack.api("POST", f"spus/{spu}/online/")
    return f"SPU {spu} offline and back"


def spu_loop_killed(stack: Stack, rng: random.Random) -> str:
    spu = rng.randrange(12)
    stack.api("POST", f"spus/{spu}/kill/")
    time.sleep(rng.uniform(4, 7))
    stack.api("POST", f"spus/{spu}/online/")
    return f"SPU {spu} loop killed, brought back"


def worker_killed(stack: Stack, rng: random.Random) -> str:
    os.killpg(stack.child("celery -A webapp worker").pid, signal.SIGKILL)
    time.sleep(rng.uniform(3, 6))
    return "worker SIGKILL (supervisor restarts it)"


def worker_paused(stack: Stack, rng: random.Random) -> str:
    worker = stack.child("celery -A webapp worker")
    pause = LEASE_S + rng.uniform(1, 4)
    os.killpg(worker.pid, signal.SIGSTOP)
    time.sleep(pause)
    os.killpg(worker.pid, signal.SIGCONT)
    return f"worker SIGSTOP for {pause:.1f} s"


def redis_killed(stack: Stack, rng: random.Random) -> str:
    os.kill(stack.child("redis-server").pid, signal.SIGKILL)
    time.sleep(rng.uniform(3, 5))
    return "redis-server SIGKILL (supervisor restarts it from its append-only file)"


FAULTS = [spu_outage, spu_loop_killed, worker_killed, worker_paused, redis_killed]


def campaign(stack: Stack, seconds: float, rng: random.Random) -> list[str]:
    log, deadline = [], time.monotonic() + seconds
    # Every kind once, in a random order, then random draws until the time is up.
    schedule = rng.sample(FAULTS, len(FAULTS))
    while time.monotonic() < deadline:
        fault = schedule.pop(0) if schedule else rng.choice(FAULTS)
        at = time.monotonic()
        try:
            done = fault(stack, rng)
        except OSError as exc:  # an outage call timing out is a finding, not the end
            done = f"{fault.__name__}: the API did not answer ({exc})"
        log.append(f"{at - (deadline - seconds):6.1f} s  {done}")
        time.sleep(rng.uniform(2, 5))
    return log


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=90)
    ap.add_argument("--seed", type=int, default=9)
    args = ap.parse_args(argv)
    stack = Stack(Path(tempfile.mkdtemp(prefix="campaign-")))
    try:
        stack.start()
        made = stack.manage("topic", "create", TOPIC, "--partitions", str(PARTITIONS),
                            "--replication", "3")
        assert made.returncode == 0, made.stderr
        print(f"fault campaign: {args.seconds:.0f} s, seed {args.seed}, {PARTITIONS} partitions")
        run(stack, args.seconds, random.Random(args.seed))
    except BaseException:
        print("supervisor output:\n" + "".join(stack.output))
        raise
    finally:
        stack.kill_all()


def run(stack: Stack, seconds: float, rng: random.Random) -> None:
    report, stop = ProducerReport(), threading.Event()
    threads = [threading.Thread(target=produce_until, args=(stack, TOPIC, p, stop, report,
                                                            f"c{p}")) for p in range(PARTITIONS)]
    start = time.monotonic()
    for t in threads:
        t.start()
    log = campaign(stack, seconds, rng)
    time.sleep(5)  # let the last fault heal under load
    end = time.monotonic()
    stop.set()
    for t in threads:
        t.join(90)
    print("\n".join(log))
    lost = lost_records(stack, TOPIC, report.acked)
    print(f"faults injected:                 {len(log)}")
    print(f"records acknowledged (acks=all): {len(report.acked)}")
    print(f"acknowledged records lost:       {len(lost)}  (goal 0)")
    print(f"writes failed or refused:        {report.failed}  (not acknowledged: allowed)")
    print(f"writes still pending at the end: {report.unresolved}")
    stall, at = report.longest_stall(start, end)
    print(f"longest stall without an ack:    {stall:.1f} s (from {at:.1f} s)")
    restarts = [line.strip() for line in stack.output if "restarting" in line]
    print(f"supervisor restarts logged:      {len(restarts)}")
    alive = stack.stop(signal.SIGTERM)
    print(f"processes left after SIGTERM:    {len(alive)}")


if __name__ == "__main__":
    main()
