"""Importing 100,000 partitions from Kafka's tool outputs (describe + log dirs + brokers).

Run: .venv/bin/python tests/bench/bench_import.py [PARTITIONS]
Writes a kafka-topics --describe text, a kafka-log-dirs output and broker headers for 30
brokers in 3 racks, 20 topics, RF 3, heavy-tailed sizes; then times, wall and CPU:
- the pure parse and assembly (``import_texts``);
- ``cluster import --plan-only`` (in-process ``call_command``: parse and the snapshot row);
- ``cluster import`` into a throwaway SQLite store (services, rows, counts).
Goal (issue 34): under 10 s for 100,000 partitions. Figures, not assertions.
"""
from __future__ import annotations

import io
import json
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup_throwaway_django

BROKERS, RACKS, TOPICS, RF = 30, 3, 20, 3


def outputs(partitions: int, seed: int = 34) -> tuple[str, str, str]:
    rng = random.Random(seed)
    per_topic = partitions // TOPICS
    describe, held = [], {b: [] for b in range(BROKERS)}
    for t in range(TOPICS):
        name = f"topic-{t}"
        describe.append(f"Topic: {name}\tTopicId: id{t}\tPartitionCount: {per_topic}\t"
                        f"ReplicationFactor: {RF}\tConfigs: min.insync.replicas=2")
        for p in range(per_topic):
            reps = rng.sample(range(BROKERS), RF)
            size = int(rng.paretovariate(1.2) * 1_000_000)
            isr = ",".join(map(str, reps))
            describe.append(f"\tTopic: {name}\tPartition: {p}\tLeader: {reps[0]}\t"
                            f"Replicas: {','.join(map(str, reps))}\tIsr: {isr}\t"
                            f"Elr: N/A\tLastKnownElr: N/A")
            for b in reps:
                held[b].append({"partition": f"{name}-{p}", "size": size, "offsetLag": 0,
                                "isFuture": False})
    dirs = {"version": 1, "brokers": [
        {"broker": b, "logDirs": [{"logDir": "/data", "error": None, "partitions": rows,
                                   "totalBytes": 10 ** 13, "usableBytes": 5 * 10 ** 12}]}
        for b, rows in held.items()]}
    log_dirs = ("Querying brokers for log directories information\n"
                f"Received log directory information from brokers "
                f"{','.join(map(str, range(BROKERS)))}\n{json.dumps(dirs)}\n")
    brokers = "".join(f"kafka-{b}:9092 (id: {b} rack: rack-{b % RACKS}) -> (\n"
                      f"\tProduce(0): 0 to 9 [usable: 9],\n)\n" for b in range(BROKERS))
    return "\n".join(describe) + "\n", log_dirs, brokers


def timed(label: str, fn) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    print(f"{label:<44} wall {time.perf_counter() - wall:6.2f} s   "
          f"cpu {time.process_time() - cpu:6.2f} s")


def main() -> None:
    partitions = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    workdir = setup_throwaway_django()
    from django.core.management import call_command

    from planner.core.kafka_import import import_texts

    texts = outputs(partitions)
    paths = []
    for name, body in zip(("describe.txt", "log-dirs.txt", "brokers.txt"), texts):
        path = workdir / name
        path.write_text(body)
        paths.append(str(path))
    print(f"{partitions:,} partitions; describe {len(texts[0]) / 1e6:.1f} MB, "
          f"log dirs {len(texts[1]) / 1e6:.1f} MB")
    timed("parse + assemble (pure)", lambda: import_texts(*texts))
    args = ["cluster", "import", "--kafka-describe", paths[0], "--kafka-log-dirs", paths[1],
            "--kafka-brokers", paths[2]]
    quiet = dict(stdout=io.StringIO(), stderr=io.StringIO())
    timed("cluster import --plan-only", lambda: call_command(*args, "--plan-only", **quiet))
    timed("cluster import (into the SQLite store)", lambda: call_command(*args, **quiet))
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
