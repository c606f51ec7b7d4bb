"""Benchmark of the pure replication core: 50 SPUs, 10,000 partitions, replication 3.

Prints figures; asserts nothing about time. Run:
    .venv/bin/python tests/bench/bench_replication_core.py [--spus 50] [--partitions 10000] \
        [--moves 1000] [--records 40]

The reassignment part builds a fresh cluster with --records committed records
per partition, starts --moves moves (each swaps one follower for an SPU outside
the list) and times whole core steps (``handle(ReplicationTick)``: moves
advanced, then one fetch round) with followers throttled to 5 records a fetch,
until every move has completed.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cluster.core.replication import (  # noqa: E402
    Acks, MoveCompleted, NotifyCandidate, ProduceRequest, PromotionSucceeded,
    ReassignPartition, ReplicationTick, Resolution, SpuOffline, advance_moves,
    cluster_from_dict, cluster_to_dict, handle, new_cluster, add_topic,
    connection_counts, produce, replication_step, spu_receive_notice)


def replica_map(spus: int, partitions: int) -> list[list[int]]:
    # Leader round robin; followers at a shift that changes every full round.
    out = []
    for p in range(partitions):
        lead = p % spus
        d = 1 + (p // spus) % (spus - 2)
        out.append([lead, (lead + d) % spus, (lead + d + 1) % spus])
    return out


def build(spus: int, partitions: int):
    state = new_cluster(range(spus))
    add_topic(state, "bench", replica_map(spus, partitions))
    return state


def timed(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return times


def bench_steps(state, partitions: int) -> None:
    replication_step(state)
    idle = timed(lambda: replication_step(state), 9)
    print(f"replication step, idle cluster:          median {statistics.median(idle):7.1f} ms"
          f"  (min {min(idle):.1f}, max {max(idle):.1f}, {len(idle)} steps)")

    def busy() -> None:
        for p in range(partitions):
            produce(state, ProduceRequest("bench", p, Acks.ALL, 1))

    busy_times = []
    for _ in range(7):
        busy()
        busy_times += timed(lambda: replication_step(state), 1)
    print(f"replication step, 1 new acks=all record  median {statistics.median(busy_times):7.1f} ms"
          f"  (min {min(busy_times):.1f}, max {max(busy_times):.1f}; per partition, all committed)")
    produce_ms = timed(busy, 3)
    print(f"produce 1 record to every partition:     median {statistics.median(produce_ms):7.1f} ms")
    catch_up = timed(lambda: replication_step(state), 1)[0]
    print(f"replication step catching up 3 records/partition: {catch_up:.1f} ms")
    counts = connection_counts(state)
    print(f"connections: {len(state.connections)} directed over {len(counts)} SPU pairs, "
          f"max per pair {max(counts.values())}")


def bench_failover(state, spu: int = 0) -> None:
    led = [rs for rs in state.replica_sets.values() if rs.leader == spu]
    t0 = time.perf_counter()
    actions = handle(state, SpuOffline(spu))
    t1 = time.perf_counter()
    notices = [a for a in actions if isinstance(a, NotifyCandidate)]
    replies = [spu_receive_notice(state, n) for n in notices]
    t2 = time.perf_counter()
    results = [handle(state, r) for r in replies if isinstance(r, PromotionSucceeded)]
    t3 = time.perf_counter()
    online = sum(rs.resolution is Resolution.ONLINE for rs in led)
    print(f"failover of SPU {spu}: led {len(led)} replica sets")
    print(f"  SpuOffline -> {len(actions)} actions, {len(notices)} candidates  {1000*(t1-t0):7.1f} ms")
    print(f"  candidates' SPU side (promote):          {1000*(t2-t1):7.1f} ms")
    print(f"  {len(results)} PromotionSucceeded events -> Online: {1000*(t3-t2):7.1f} ms")
    print(f"  Online after 1 SC step + 1 response each: {online}/{len(led)}; "
          f"events {1 + len(results)}, total {1000*(t3-t0):.1f} ms")


def bench_serial(state) -> None:
    t = time.perf_counter()
    text = json.dumps(cluster_to_dict(state))
    t1 = time.perf_counter()
    cluster_from_dict(json.loads(text))
    t2 = time.perf_counter()
    print(f"serialise whole cluster to JSON: {1000*(t1-t):.0f} ms ({len(text)/1e6:.1f} MB), "
          f"load: {1000*(t2-t1):.0f} ms")


def _move_targets(state, spus: int, moves: int) -> list[tuple[int, tuple[int, ...]]]:
    step = max(1, len(state.replica_sets) // moves)
    out = []
    for p in range(0, step * moves, step):
        replicas = state.replica_sets[("bench", p)].replicas
        new = next(s for s in range(replicas[-1] + 1, replicas[-1] + spus)
                   if s % spus not in replicas) % spus
        out.append((p, (*replicas[:-1], new)))
    return out


def bench_moves(spus: int, partitions: int, moves: int, records: int) -> None:
    state = build(spus, partitions)
    for p in range(partitions):
        produce(state, ProduceRequest("bench", p, Acks.LEADER, records))
    replication_step(state)
    idle = timed(lambda: handle(state, ReplicationTick(max_records=5)), 5)
    t = time.perf_counter()
    for p, target in _move_targets(state, spus, moves):
        handle(state, ReassignPartition("bench", p, target))
    started = 1000 * (time.perf_counter() - t)
    decide = timed(lambda: advance_moves(state), 3)
    steps, done = [], 0
    while done < moves and len(steps) < 100:
        t = time.perf_counter()
        actions = handle(state, ReplicationTick(max_records=5))
        steps.append(1000 * (time.perf_counter() - t))
        done += sum(isinstance(a, MoveCompleted) for a in actions)
    print(f"reassignment: {moves} moves, {records} records each, followers fetch 5 records a step")
    print(f"  start {moves} moves:                      {started:7.1f} ms")
    print(f"  core step, no move in flight:         median {statistics.median(idle):7.1f} ms")
    print(f"  core step, {moves} moves in flight:    median {statistics.median(steps):7.1f} ms"
          f"  (min {min(steps):.1f}, max {max(steps):.1f}, {len(steps)} steps)")
    print(f"  advance_moves alone, nothing ready:   median {statistics.median(decide):7.1f} ms")
    print(f"  {done}/{moves} moves completed after {len(steps)} steps")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--spus", type=int, default=50)
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--moves", type=int, default=1000)
    ap.add_argument("--records", type=int, default=40)
    args = ap.parse_args(argv)
    t = time.perf_counter()
    state = build(args.spus, args.partitions)
    print(f"{args.spus} SPUs, {args.partitions} partitions, replication 3 "
          f"(built in {1000*(time.perf_counter()-t):.0f} ms)")
    bench_steps(state, args.partitions)
    bench_failover(state)
    t = time.perf_counter()
    replication_step(state)
    print(f"replication step after failover: {1000*(time.perf_counter()-t):.1f} ms")
    bench_serial(state)
    bench_moves(args.spus, args.partitions, args.moves, args.records)


if __name__ == "__main__":
    main()
