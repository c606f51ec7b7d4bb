"""Benchmark: what the meta costs a unit of work at N topics, without Redis (issue 33).

Builds a core with N topics (``--partitions`` each) and their shell tables, then times,
best of 5 rounds of 20 (CPU, this process):
- ``save_unchanged_ms``: ``meta_texts`` when no topic changed (a tick's save);
- ``save_changed_ms``: ``meta_texts`` after one table was replaced (a rate set);
- ``load_kept_ms``: a load of the meta this process wrote (``read_meta``: the small key
  parsed, the kept topics handed out);
- ``load_parsed_ms``: a load of a meta another process wrote (both keys read, the
  topics' text parsed);
and prints the two texts' sizes (``small_bytes``, ``topics_bytes``). Asserts nothing about
time. Run:
    .venv/bin/python tests/bench/bench_meta.py [--topics 10000] [--partitions 10] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cluster.adapters.meta_json import MetaParts, meta_texts  # noqa: E402
from cluster.adapters.meta_reading import read_meta  # noqa: E402
from cluster.core.replication import TopicConfig, new_cluster  # noqa: E402


def best_ms(fn) -> float:  # type: ignore[no-untyped-def]
    return round(min(timeit.repeat(fn, number=20, repeat=5)) / 20 * 1000, 3)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topics", type=int, default=10_000)
    ap.add_argument("--partitions", type=int, default=10, help="partitions a topic")
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = ap.parse_args(argv)
    if args.topics < 1 or args.partitions < 1:
        ap.error("--topics and --partitions must be at least 1")
    state = new_cluster(range(50))
    tables = {}
    for i in range(args.topics):
        name, first = f"bench-{i}", i * args.partitions
        state.topics[name] = TopicConfig(name, min_lrs=2)
        tables[name] = {"pk": i, "partitions": list(range(first, first + args.partitions)),
                        "rate": 1.0}
    producers = {name: {"last_ms": 1000, "carry": 0.5, "next": 3} for name in tables}
    parts = MetaParts()

    def save() -> tuple[bytes, bytes]:
        texts = meta_texts("s", state, tables, producers, "run", {}, parts=parts)
        return texts.small, texts.topics

    small, topics = save()
    result = {"topics": args.topics, "partitions": args.partitions,
              "small_bytes": len(small), "topics_bytes": len(topics),
              "save_unchanged_ms": best_ms(save)}

    def replaced() -> None:
        tables["bench-0"] = {**tables["bench-0"], "rate": tables["bench-0"]["rate"] + 1}
        save()

    result["save_changed_ms"] = best_ms(replaced)
    small, topics = save()
    result["load_kept_ms"] = best_ms(lambda: read_meta(small, "s", parts,
                                                       lambda: (small, topics)))
    result["load_parsed_ms"] = best_ms(lambda: read_meta(small, "s", MetaParts(),
                                                         lambda: (small, topics)))
    if args.json:
        print(json.dumps(result))
        return
    for name, value in result.items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
