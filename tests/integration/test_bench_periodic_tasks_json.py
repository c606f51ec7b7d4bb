"""The periodic tasks' benchmark (tests/bench/bench_periodic_tasks.py) runs each task a
worker runs besides the tick, and prints its figures, at a size that runs in seconds."""
from __future__ import annotations

import json
from functools import partial

from tests.helpers import run_bench as _run

run_bench = partial(_run, "bench_periodic_tasks.py")


def test_json_times_every_periodic_task_after_the_first_ticks():
    done = run_bench("--partitions", "300", "--shards", "2", "--repeat", "2", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.splitlines()[-1])
    assert (figures["partitions"], figures["shards"]) == (300, 2)
    assert set(figures["tasks"]) == {"healing_check", "leader_rebalance_check",
                                     "reconcile_topics", "history_snapshot"}
    for name, task in figures["tasks"].items():
        assert task["first_ms"] > 0 and task["median_ms"] > 0, name


def test_spu_changes_time_the_coordinators_tick_and_the_shards_steps_after_each():
    done = run_bench("--partitions", "300", "--shards", "2", "--only", "none",
                     "--spu-changes", "2", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.splitlines()[-1])
    assert figures["tasks"] == {}
    assert [c["spu"] for c in figures["spu_changes"]] == [0, 1]
    for change in figures["spu_changes"]:
        for name in ("offline", "online"):
            assert change[f"{name}_coordinator_ms"] > 0
            assert change[f"{name}_next_step_ms"] > 0 and change[f"{name}_step_after_ms"] > 0


def test_plan_ticks_time_the_ticks_while_a_drain_runs_and_its_moves_go_on():
    done = run_bench("--partitions", "300", "--shards", "2", "--only", "none",
                     "--plan-ticks", "4", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.splitlines()[-1])
    plan = figures["plan_ticks"]
    assert plan["moves"] > 0 and len(plan["ticks"]) == 4
    for tick in plan["ticks"]:
        # Sharded, the plan's step runs on its own sets and the shards step every tick.
        assert tick["coordinator_ms"] > 0 and tick["ran_shards"] is True
    assert plan["ticks"][0]["in_flight"] > 0


def test_redis_restarts_time_the_coordinators_tick_after_each_which_checks_it_quietly():
    done = run_bench("--partitions", "300", "--shards", "2", "--only", "none",
                     "--redis-restarts", "2", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    restarts = json.loads(done.stdout.splitlines()[-1])["redis_restarts"]
    assert len(restarts) == 2
    for row in restarts:
        # The append-only file kept the log: the quiet tick checks the new run, shards step.
        assert row["ran"] == "quiet" and row["shards_ms"] > 0 and row["next_step_ms"] > 0


def test_hot_redis_spreads_the_hot_state_and_restarts_restart_the_server_of_the_meta():
    done = run_bench("--partitions", "300", "--shards", "2", "--only", "none",
                     "--hot-redis", "2", "--spu-changes", "1", "--redis-restarts", "1",
                     "--web-produces", "1",
                     "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.splitlines()[-1])
    assert [c["spu"] for c in figures["spu_changes"]] == [0]
    (restart,) = figures["redis_restarts"]
    assert restart["ran"] == "quiet" and restart["shards_ms"] > 0
    (produced,) = figures["web_produces"]
    assert produced["next_step_ms"] > 0 and produced["step_after_ms"] > 0
