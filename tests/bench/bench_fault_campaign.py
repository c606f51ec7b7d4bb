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
import random
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.fault_campaign import (PARTITIONS, TOPIC, campaign, redis_killed,  # noqa: E402
                                  spu_loop_killed, spu_outage, worker_killed, worker_paused)
from tests.stack import ProducerReport, Stack, lost_records, produce_until  # noqa: E402

# The benchmark's mix: whole-process faults at random moments (the test adds elections
# interrupted on purpose and unclean elections: tests/integration/test_fault_campaign.py).
FAULTS = [spu_outage, spu_loop_killed, worker_killed, worker_paused, redis_killed]


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
    log = campaign(stack, seconds, rng, FAULTS)
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
