"""bench_sharded_ticks.py's scale-out summary (issue 33): per worker count, the largest
size held at 1 step/s with the Redis servers' CPU there, and what the workers carried."""
from __future__ import annotations

from tests.bench.bench_sharded_ticks import TOPIC_MAX, new_topics, scale_out, skipped


def round_(partitions: int, workers: int, rate: float, redis: float) -> dict:
    return {"partitions": partitions, "workers": workers, "steps_per_s": rate,
            "holds_1_step_per_s": rate >= 0.9, "partition_steps_per_s": round(rate * partitions),
            "redis_cpu_cores": {"redis": redis}}


def test_each_count_names_its_largest_held_size_and_the_redis_cpu_there():
    rounds = [round_(1000, 1, 1.0, 0.1), round_(2000, 1, 0.5, 0.2),
              round_(1000, 2, 1.0, 0.1), round_(2000, 2, 0.95, 0.3)]
    summary = scale_out(rounds, [1, 2])
    assert summary["1"]["largest_held"] == 1000
    assert summary["1"]["redis_cpu_cores_at_largest"] == {"redis": 0.1}
    assert summary["2"]["largest_held"] == 2000
    assert summary["2"]["redis_cpu_cores_at_largest"] == {"redis": 0.3}
    assert summary["2"]["most_partition_steps_per_s"] == 1900
    assert summary["2"]["vs_first_count"] == 1.9


def test_a_count_that_held_no_size_still_says_what_it_carried():
    summary = scale_out([round_(5000, 1, 0.4, 0.5), round_(5000, 2, 0.7, 0.6)], [1, 2])
    assert summary["1"]["largest_held"] == 0
    assert summary["1"]["redis_cpu_cores_at_largest"] is None
    assert summary["2"]["vs_first_count"] == 1.75


def test_holding_the_largest_size_tried_says_the_limit_lies_above():
    summary = scale_out([round_(1000, 1, 1.0, 0.1), round_(2000, 1, 0.5, 0.2),
                         round_(1000, 2, 1.0, 0.1), round_(2000, 2, 1.0, 0.2)], [1, 2])
    assert not summary["1"]["held_every_size"]
    assert summary["2"]["held_every_size"]


def test_a_size_past_one_topics_limit_grows_in_several_topics():
    assert new_topics(250_000, 0) == [("bench250000", TOPIC_MAX), ("bench250000-1", TOPIC_MAX),
                                      ("bench250000-2", 50_000)]
    assert new_topics(120_000, 100_000) == [("bench120000", 20_000)]
    assert new_topics(5_000, 5_000) == []


def test_rounds_outside_the_partitions_per_worker_bounds_are_skipped():
    assert not skipped(100_000, 4, most=0, least=0)
    assert skipped(100_000, 1, most=90_000, least=0)
    assert not skipped(90_000, 1, most=90_000, least=30_000)
    assert skipped(100_000, 12, most=90_000, least=30_000)


def test_the_other_tasks_a_worker_ran_in_the_window_are_summed(tmp_path):
    from datetime import datetime

    from tests.bench.bench_sharded_ticks import Round, parse

    def line(at: str, task: str, seconds: float, result: str) -> str:
        return (f"[2026-11-30 {at},000: INFO/ForkPoolWorker-1] Task {task}[abc-1] "
                f"succeeded in {seconds}s: {result}")

    (tmp_path / "w0.log").write_text("\n".join([
        line("10:00:01", "healing.tasks.healing_check", 2.5, "{'mode': 'off'}"),
        line("10:00:02", "cluster.tasks.replication_shard_tick", 0.4,
             "{'shard': 0, 'sets': 10, 'actions': 0, 'ms': 400, 'cpu_ms': 300}"),
        line("10:00:03", "healing.tasks.healing_check", 1.5, "{'mode': 'off'}"),
        line("10:00:09", "cluster.tasks.reconcile_topics", 4.0, "{'topics': []}"),  # after
    ]))
    out = Round(workers=1, window_s=5)
    parse(tmp_path, ["w0"], datetime(2026, 11, 30, 10, 0, 0), datetime(2026, 11, 30, 10, 0, 5),
          out)
    assert out.other == {"healing_check": [2, 4.0]}
    assert out.steps == {0: 1} and out.worker_cpu == {"w0": [300]}
