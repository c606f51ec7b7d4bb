"""Benchmark: engine tick cost with network cuts in force against none (10,000 partitions).

Prints figures; asserts nothing about time. A throwaway SQLite store and a private
Redis of its own (never one it did not start), 50 SPUs in 5 racks, replication 3,
the simulated producer writing one acks=1 record per partition per second. Each
scenario measures steady ticks without a cut (its baseline: logs grow and leaders
move over the run), cuts, lets the sessions expire (ticks one second apart), measures
steady ticks with the cut (wall and CPU ms of this process), then heals and measures
the heal's unit of work and what the report counted. Run:
    .venv/bin/python tests/bench/bench_network_cuts.py [--spus 50] [--partitions 10000]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup_throwaway_django  # noqa: E402
from bench_replication_shell import build, setup_redis, timed_cpu  # noqa: E402

RACKS = 5


class Clock:
    def __init__(self) -> None:
        self.now = int(time.time() * 1000)

    def tick(self) -> tuple[float, float]:
        from cluster.services.replication import replication_tick
        from cluster.services.waiting import LocalQueue

        self.now += 1000
        return timed_cpu(lambda: replication_tick(now=self.now, dispatch=LocalQueue()))


def steady(clock: Clock, label: str, steps: int) -> None:
    runs = [clock.tick() for _ in range(steps)]
    wall, cpu = [w for w, _ in runs], [c for _, c in runs]
    print(f"{label:<52} CPU median {statistics.median(cpu):7.1f} ms/tick "
          f"(min {min(cpu):.1f}, max {max(cpu):.1f}); wall median {statistics.median(wall):.1f} ms")


def scenario(clock: Clock, label: str, request: object, steps: int) -> None:
    from cluster.services.network import net_cut, net_heal, net_report

    # The baseline right before the cut: logs grow and leaders move over the run.
    steady(clock, "steady tick, no cut (baseline)", steps)
    cut = net_cut(request=request, by="bench")
    expiry = [clock.tick() for _ in range(5)]  # the heartbeat timeout (3 s) passes
    print(f"{cut['label']}: 5 ticks while sessions expire, CPU max "
          f"{max(c for _, c in expiry):.0f} ms")
    steady(clock, f"  steady tick, {label}", steps)
    wall, cpu = timed_cpu(lambda: net_heal(heal_all=True, by="bench"))
    after = [clock.tick() for _ in range(3)]
    report = net_report() or {}
    print(f"  heal (its unit of work): CPU {cpu:.0f} ms, wall {wall:.0f} ms; next 3 ticks CPU "
          f"max {max(c for _, c in after):.0f} ms")
    print(f"  report: acks=1 truncated {report.get('acks1_truncated_count')}, unacknowledged "
          f"lost {report.get('unacknowledged_lost')}, refused {report.get('refused_total')}, "
          f"partitions that lost their leader {len(report.get('leaderless_ms', {}))}"
          f"{' (record lists capped)' if report.get('capped') else ''}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--spus", type=int, default=50)
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--steps", type=int, default=6)
    args = ap.parse_args(argv)
    workdir = setup_throwaway_django()
    from django.conf import settings

    settings.REPLICATION_SIMULATED_PRODUCERS = True
    proc = setup_redis(workdir)
    try:
        from cluster.services.network import CutRequest

        build(args.spus, args.partitions, racks=RACKS, rate=args.partitions)
        print(f"{args.spus} SPUs in {RACKS} racks, {args.partitions} partitions, replication 3, "
              f"{args.partitions} simulated records/s")
        clock = Clock()
        for _ in range(3):
            clock.tick()
        scenario(clock, "SPU 1 cut from SPU 2 (fetches)",
                 CutRequest(1, "spu", 2), args.steps)
        scenario(clock, "leader SPU 0 deposed, producers write to it",
                 CutRequest(0, "controller"), args.steps)
        scenario(clock, "rack-0 split from the rest",
                 CutRequest(racks="rack-0"), args.steps)
        steady(clock, "steady tick, healed", args.steps)
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()
