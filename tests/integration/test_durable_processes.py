"""The running engine keeps what it acknowledged, on real processes (scripts/run.py with its
private, append-only Redis): a worker paused past its lease, a worker killed mid-produce,
a restart of the whole stack, and SIGTERM stopping every process."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.stack import ROOT, Acked, ProducerReport, Stack, lost_records, produce_until

pytestmark = [pytest.mark.redis]
TOPIC = "durable"
LEASE_S = 3.0  # REPLICATION_LOCK_LEASE_S's default
PRESENCE_TTL_S = 5  # REPLICATION_WORKER_TTL_S's default
ACKED: list[Acked] = []  # every record acknowledged in this module, read back after the restart


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    running = Stack(tmp_path_factory.mktemp("stack"))
    try:
        running.start()
        made = running.manage("topic", "create", TOPIC, "--partitions", "2", "--replication", "3")
        assert made.returncode == 0, made.stderr
        yield running
    finally:
        running.kill_all()


class HwWatch:
    """Polls the partitions' HW through the API; remembers every step backwards."""

    def __init__(self, stack: Stack) -> None:
        self.stack, self.stop, self.backwards = stack, threading.Event(), []
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        last: dict[int, int] = {}
        while not self.stop.wait(0.3):
            try:
                now = self.stack.hws(TOPIC)
            except OSError:
                continue
            self.backwards += [(p, last[p], hw) for p, hw in now.items() if hw < last.get(p, 0)]
            last.update(now)

    def finish(self) -> list[tuple[int, int, int]]:
        self.stop.set()
        self.thread.join(5)
        return self.backwards


def producing(stack: Stack, tag: str, fault) -> tuple[ProducerReport, float, float]:
    """Two producers (one per partition) around ``fault``; returns what they got, when the
    fault began and when it was over."""
    report, stop = ProducerReport(), threading.Event()
    threads = [threading.Thread(target=produce_until, args=(stack, TOPIC, p, stop, report,
                                                            f"{tag}{p}")) for p in (0, 1)]
    for t in threads:
        t.start()
    time.sleep(2)
    at = time.monotonic()
    fault()
    until = time.monotonic()
    stop.set()
    for t in threads:
        t.join(60)
    ACKED.extend(report.acked)
    return report, at, until


def pause_when_locked(stack: Stack, seconds: float) -> None:
    """SIGSTOP the worker the moment the lease is held (likely by its tick), past the lease."""
    import redis

    worker = stack.tick_owner()
    client = redis.Redis.from_url((stack.var / "redis.url").read_text().strip())
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and not any(client.scan_iter(match="repl:*:lock")):
        time.sleep(0.002)
    os.killpg(worker.pid, signal.SIGSTOP)
    time.sleep(seconds)
    os.killpg(worker.pid, signal.SIGCONT)
    time.sleep(4)


def test_the_worker_run_starts_consumes_this_installations_own_queue(stack):
    code = "from webapp.celery import app; print(app.conf.task_default_queue)"
    queue = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=stack.env(), text=True,
                           capture_output=True, timeout=60, check=True).stdout.strip()
    # A worker still starting (its first ticks, with a second test worker busy beside it)
    # may miss one 10 s inspect window: what is checked is each node's queues, so ask again
    # until both of make run's worker nodes (scripts/run.py: workers) have answered.
    replies: dict = {}
    for _ in range(6):
        asked = subprocess.run([sys.executable, "-m", "celery", "-A", "webapp", "inspect",
                                "active_queues", "--json", "--timeout", "10"], cwd=ROOT,
                               env=stack.env(), text=True, capture_output=True, timeout=90)
        if asked.returncode == 0:
            replies.update(json.loads(asked.stdout.strip().splitlines()[-1]))
        if len(replies) >= 2:
            break
    assert queue.startswith("control-room-") and len(replies) == 2, (queue, replies, asked.stderr)
    for node, names in replies.items():
        # This installation's queue, and the node's own one within it (sticky shards and
        # the sticky tick: cluster/adapters/shard_owners.py), never another installation's.
        assert sorted(q["name"] for q in names) == [queue, f"{queue}.node.{node}"]


def done_by_node(stack: Stack, pattern: str) -> dict[str, int]:
    """Per worker node's log, how many lines match ``pattern``."""
    logs = sorted((stack.var / "logs").glob("worker*.log"))
    return {log.name: len(re.findall(pattern, log.read_text(errors="replace"))) for log in logs}


# A whole tick that ran (a tick forwarded or skipped reports None), a healing check.
TICK_RAN = r"replication_tick\[[^\]]+\] succeeded in [\d.e-]+s: \{"
HEALING_RAN = r"healing_check\[[^\]]+\] succeeded"


def test_the_tick_stays_on_one_worker_process_and_the_healing_check_runs_on_the_other(stack):
    # Beat sends the tick to the node that ran the last one (a tick landing elsewhere is
    # forwarded), so one process keeps every set decoded; the long periodic tasks go to
    # the other node, so they never hold that process while a tick waits.
    time.sleep(3)
    ticks, checks = done_by_node(stack, TICK_RAN), done_by_node(stack, HEALING_RAN)
    time.sleep(12)
    ran = {log: n - ticks.get(log, 0) for log, n in done_by_node(stack, TICK_RAN).items()}
    healed = {log: n - checks.get(log, 0)
              for log, n in done_by_node(stack, HEALING_RAN).items()}
    print(f"over 12 s, whole ticks by node: {ran}; healing checks by node: {healed}")
    assert len(ran) == 2 and sum(ran.values()) >= 6, ran
    assert max(ran.values()) >= sum(ran.values()) - 1, ran
    owner_log = max(ran, key=ran.get)
    assert sum(healed.values()) >= 1 and healed[owner_log] == 0, (ran, healed)
    owner = stack.tick_owner()
    assert owner.is_running() and "worker" in " ".join(owner.cmdline())


def test_a_worker_paused_past_its_lease_loses_nothing_and_hw_never_goes_back(stack):
    watch = HwWatch(stack)
    report, _, _ = producing(stack, "paused", lambda: pause_when_locked(
        stack, LEASE_S + PRESENCE_TTL_S + 1))
    refused = sum(log.read_text().count("lease expired")
                  for log in (stack.var / "logs").glob("worker*.log"))
    print(f"{len(report.acked)} acknowledged; stale saves the fencing refused: {refused}")
    assert report.acked and report.unresolved == 0, report
    lost = lost_records(stack, TOPIC, report.acked)
    assert lost == [], (lost, {p: stack.records(TOPIC, p) for p in (0, 1)})
    assert len({(a.partition, a.offset) for a in report.acked}) == len(report.acked), report
    backwards = watch.finish()
    assert backwards == [], backwards


def test_a_worker_killed_mid_produce_is_restarted_and_nothing_is_lost(stack):
    def kill() -> None:
        seen = len(stack.output)
        os.killpg(stack.tick_owner().pid, signal.SIGKILL)
        # "worker exited" or "worker2 exited", by which node ran the tick
        assert "worker" in stack.wait_for_line(" exited (code", 10, after=seen)
        time.sleep(8)

    report, killed_at, until = producing(stack, "killed", kill)
    stall, _ = report.longest_stall(killed_at, until)
    print(f"longest time without an acks=all acknowledgement after the worker was killed: "
          f"{stall:.1f} s")
    assert stall < 15
    assert lost_records(stack, TOPIC, report.acked) == []


def hot_hws(stack: Stack) -> dict[int, int]:
    listed = stack.manage("partition", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return {r["partition"]: r["hw"] for r in json.loads(listed.stdout) if r["topic"] == TOPIC}


def settled_hws(stack: Stack, seconds: float = 60) -> dict[int, int]:
    """The store's HWs once they agree with the hot state's.

    A worker killed between saving Redis and writing the store (the SIGKILL test)
    leaves a row behind until periodic reconciliation (RECONCILE_INTERVAL_S)
    heals it; a restart then heals it too, so HWs read before that would differ.
    """
    deadline = time.monotonic() + seconds
    while True:
        store, hot = stack.hws(TOPIC), hot_hws(stack)
        if store == hot:
            return store
        print(f"store HWs {store} behind the hot state's {hot}: waiting for reconciliation")
        assert time.monotonic() < deadline, (store, hot)
        time.sleep(1)


def test_a_restart_of_the_stack_keeps_every_acknowledged_record_and_hw(stack):
    made = stack.manage("produce", TOPIC, "--partition", "0", "--value", "cmd-a", "--value",
                        "cmd-b", "--acks", "all", "--json")
    assert made.returncode == 0, made.stderr
    out = json.loads(made.stdout)
    assert out["state"] == "acknowledged"
    ACKED.extend([Acked(0, out["base_offset"], "cmd-a"), Acked(0, out["base_offset"] + 1, "cmd-b")])
    hws = settled_hws(stack)
    url = (stack.var / "redis.url").read_text()
    assert stack.stop(signal.SIGINT) == []
    stack.start()
    assert (stack.var / "redis.url").read_text() == url  # the private Redis keeps its port
    assert stack.hws(TOPIC) == hws
    lost = lost_records(stack, TOPIC, ACKED)
    assert lost == [], lost
    assert hot_hws(stack) == hws


def test_sigterm_stops_every_process_including_the_private_redis(stack):
    redis_server = stack.child("redis-server")
    assert stack.stop(signal.SIGTERM) == []
    assert not redis_server.is_running()
