"""SPU loops spread over two Celery worker processes (REPLICATION_SHARDS=4) on a real stack
(scripts/run.py with its private Redis, plus a second `celery -A webapp worker` pointed at the
same Redis and database, as the README says): producers with acks=all, an SPU outage and its
return, and at the end nothing acknowledged is lost, HW never went back, one leader per
partition, and the durability checker's invariants hold on the saved hot state. Twice: with
the hot state on the stack's Redis, and spread over two private Redis servers of its own
(HOT_STATE_REDIS_URLS: shards 0 and 2 on the first, 1 and 3 on the second; the broker and
the channel layer on the stack's Redis)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from tests.stack import (ROOT, HotRedis, HwWatch, ProducerReport, ShardedStack, _poll,
                         lost_records, produce_until)

pytestmark = [pytest.mark.redis]
TOPIC = "spread"
SHARDS = 4
# Shards take whole live blocks of 200 partitions: four blocks give every shard a part.
PARTITIONS = 800
PRODUCED = (0, 1, 200, 400, 600, 799)
# The saved hot state, checked in the stack's own environment (its store id, its Redis).
CHECK = """
import json
from cluster.adapters import hot_state
from cluster.testing.invariants import InvariantChecker
hot = hot_state.load()
InvariantChecker().check(hot.state)
sets = [rs for key, rs in hot.state.replica_sets.items() if key[0] == %r]
print(json.dumps({"leaders": {rs.partition: rs.leader for rs in sets},
                  "claims": {rs.partition: [s for s in rs.replicas if hot.state.spus[s]
                                            and rs.replica[s].claims_leadership] for rs in sets},
                  "resolutions": sorted({rs.resolution.value for rs in sets})}))
""" % TOPIC


def start_second_worker(stack: ShardedStack) -> subprocess.Popen:
    url = (stack.var / "redis.url").read_text().strip()
    log = (stack.var / "logs" / "worker2.log").open("w")
    return subprocess.Popen([sys.executable, "-m", "celery", "-A", "webapp", "worker",
                             "--concurrency", "1", "-n", "second@%h", "-l", "info"],
                            cwd=ROOT, env={**stack.env(), "REDIS_URL": url},
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def shard_ticks(log: Path) -> int:
    return len(re.findall(r"replication_shard_tick\[[^\]]+\] succeeded", log.read_text()))


def wait_until(check, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.3)


@pytest.fixture(scope="module", params=["one-redis", "two-hot-redis"])
def stack(request, tmp_path_factory):
    # One supervised worker node, and a second started here as the README says.
    running = ShardedStack(tmp_path_factory.mktemp("sharded"), shards=SHARDS, worker_nodes=1)
    second = None
    try:
        if request.param == "two-hot-redis":
            running.hot = [HotRedis(tmp_path_factory.mktemp(f"hot-redis-{i}"))
                           for i in range(2)]
        running.start()
        second = start_second_worker(running)
        made = running.manage("topic", "create", TOPIC, "--partitions", str(PARTITIONS),
                              "--replication", "3")
        assert made.returncode == 0, made.stderr
        yield running
    finally:
        if second is not None:
            second.kill()
            second.wait(10)
        running.kill_all()  # and the hot-state servers


def test_two_workers_share_the_shards_through_an_outage_and_lose_nothing(stack):
    logs = stack.var / "logs"
    wait_until(lambda: shard_ticks(logs / "worker.log") and shard_ticks(logs / "worker2.log"),
               60, "both workers ran shard ticks")
    wait_until(lambda: len(stack.hws(TOPIC)) == PARTITIONS, 30, "the topic is listed")
    watch = HwWatch(stack, TOPIC)
    report, stop = ProducerReport(), threading.Event()
    threads = [threading.Thread(target=produce_until, args=(stack, TOPIC, p, stop, report,
                                                            f"p{p}")) for p in PRODUCED]
    for t in threads:
        t.start()
    time.sleep(3)
    _, rows = stack.api("GET", f"partitions/?topic={TOPIC}&limit=1000")
    rows = rows["results"] if isinstance(rows, dict) else rows
    victim = next(r["leader"] for r in rows if r["partition"] == 0)
    before = {w: shard_ticks(logs / w) for w in ("worker.log", "worker2.log")}
    status, body = stack.api("POST", f"spus/{victim}/offline/", {})
    assert status == 200, body
    time.sleep(4)
    status, body = stack.api("POST", f"spus/{victim}/online/", {})
    assert status == 200, body
    time.sleep(4)
    stop.set()
    for t in threads:
        t.join(60)
    backwards = watch.finish()

    during = {w: shard_ticks(logs / w) - n for w, n in before.items()}
    print(f"{len(report.acked)} acknowledged, {report.failed} refused, {report.unresolved} "
          f"unresolved; SPU {victim} out and back; shard ticks per worker during it: {during}; "
          f"{watch.samples} HW samples")
    assert all(during.values()), during
    assert len(report.acked) >= len(PRODUCED) and report.unresolved == 0, report
    assert lost_records(stack, TOPIC, report.acked) == []
    assert len({(a.partition, a.offset) for a in report.acked}) == len(report.acked)
    assert watch.samples >= 2 and backwards == [], backwards  # it did sample
    checked = stack.manage("shell", "-c", CHECK)
    assert checked.returncode == 0, checked.stderr  # InvariantViolation names the rule broken
    final = json.loads(checked.stdout.strip().splitlines()[-1])
    assert len(final["leaders"]) == PARTITIONS
    assert all(leader is not None for leader in final["leaders"].values()), final
    assert all(claims == [final["leaders"][p]] for p, claims in final["claims"].items()), final
    assert final["resolutions"] == ["Online"], final
    if stack.hot_urls:  # the sets are on both hot-state servers, none on the broker's Redis
        import redis

        broker = (stack.var / "redis.url").read_text().strip()
        found = []
        for url in (*stack.hot_urls, broker):
            client = redis.Redis.from_url(url)
            found.append(sum(client.hlen(k) for k in client.scan_iter(match=f"*:sets:{TOPIC}")))
            client.close()
        assert found[0] and found[1] and found[0] + found[1] == PARTITIONS and not found[2], found


def test_a_topic_reset_while_every_worker_is_paused_is_made_anew_from_its_new_rows(stack):
    """An operator deletes a topic and creates it again under its name while no worker
    steps (each SIGSTOPped): the engine finds both at once when they resume (from the log,
    dropped by one unit and made by the next; this test checks the outcome, not the path:
    test_topology_controllers.py does). The topic is then the new one: its
    partition count and replication, no record of the old one, and records produced to it
    read back."""
    name, old, new = "reset", 400, 200
    made = stack.manage("topic", "create", name, "--partitions", str(old), "--replication", "3")
    assert made.returncode == 0, made.stderr
    wait_until(lambda: len(stack.hws(name)) == old, 60, "the topic is listed")
    for p in (0, old - 1):
        assert acked(stack, name, p, f"old-{p}")
    # Every Celery process this test started: the stack's node and beat, and the second
    # node (this process's child, outside the stack's family).
    workers = [p for p in psutil.Process().children(recursive=True) if "celery" in command(p)]
    assert sum("second@" in command(p) for p in workers) >= 1, workers
    assert len(workers) >= 3, workers
    for p in workers:
        p.suspend()  # (a worker that ended meanwhile fails the test: the stack broke)
    try:
        for args in (("delete", name),
                     ("create", name, "--partitions", str(new), "--replication", "2")):
            done = stack.manage("topic", *args)
            assert done.returncode == 0, done.stderr
    finally:
        for p in workers:
            p.resume()
    wait_until(lambda: replicated(stack, name) == new, 90, "the engine made the new topic")
    assert acked(stack, name, 0, "new-0")
    assert stack.records(name, 0) == {0: "new-0"}  # nothing of the old topic's partition 0
    checked = stack.manage("shell", "-c", RESET_CHECK % (name, name))
    assert checked.returncode == 0, checked.stderr  # InvariantViolation names the rule broken
    final = json.loads(checked.stdout.strip().splitlines()[-1])
    assert final == {"partitions": list(range(new)), "replication": [2], "leaderless": [],
                     "resolutions": ["Online"], "rows_agree": True}, final


def command(process: psutil.Process) -> str:
    """Its command line; empty for one that has ended (a zombie another test left unwaited
    among this process's children)."""
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def acked(stack: ShardedStack, topic: str, partition: int, value: str) -> bool:
    status, body = stack.produce(topic, partition, value)
    if status == 202:
        status, body = _poll(stack, body)
    return status == 200 and body.get("state") == "acknowledged"


def replicated(stack: ShardedStack, topic: str) -> int:
    """How many of the topic's sets the saved hot state holds."""
    done = stack.manage("shell", "-c", "from cluster.adapters import hot_state; print(sum("
                        f"1 for t, _ in hot_state.load().state.replica_sets if t == {topic!r}))")
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip().splitlines()[-1])


# The topic made again, as the saved hot state and its rows hold it.
RESET_CHECK = """
import json
from cluster.adapters import hot_state
from cluster.models import Partition
from cluster.testing.invariants import InvariantChecker
hot = hot_state.load()
InvariantChecker().check(hot.state)
sets = {rs.partition: rs for key, rs in hot.state.replica_sets.items() if key[0] == %r}
rows = dict(Partition.objects.filter(topic__name=%r).values_list("index", "replicas"))
print(json.dumps({"partitions": sorted(sets), "replication": sorted({len(rs.replicas)
                  for rs in sets.values()}),
                  "leaderless": sorted(p for p, rs in sets.items() if rs.leader is None),
                  "resolutions": sorted({rs.resolution.value for rs in sets.values()}),
                  "rows_agree": rows == {p: list(rs.replicas) for p, rs in sets.items()}}))
"""
