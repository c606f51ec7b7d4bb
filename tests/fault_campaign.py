"""Faults for campaigns against a real stack (tests/stack.py), shared by the fault campaign
test (tests/integration/test_fault_campaign.py) and its benchmark
(tests/bench/bench_fault_campaign.py): each takes the stack and a seeded random source,
does its damage, heals what it broke, and returns a line saying what it did."""
from __future__ import annotations

import os
import random
import signal
import threading
import time

from tests.stack import ShardedStack, Stack

TOPIC = "campaign"
PARTITIONS = 3
LEASE_S = 3.0  # REPLICATION_LOCK_LEASE_S's default


def _rows(stack: Stack, topic: str | None = None) -> list[dict]:
    query = f"topic={topic}&" if topic else ""
    status, body = stack.api("GET", f"partitions/?{query}limit=1000")
    assert status == 200, body
    return body["results"] if isinstance(body, dict) else body


def _online(stack: Stack) -> set[int]:
    status, body = stack.api("GET", "spus/?limit=1000")
    rows = body["results"] if isinstance(body, dict) else body
    return {r["id"] for r in rows if r["resolution"] == "Online"}


class LeaderWatch:
    """Samples the campaign's topics: how long each partition stayed leaderless while one
    of its LRS members was online (so an election could have led it)."""

    def __init__(self, stack: Stack, topics: tuple[str, ...] = (TOPIC,)) -> None:
        self.stack, self.topics, self.stop = stack, topics, threading.Event()
        self.longest: dict[tuple[str, int], float] = {}
        self.samples = 0  # rounds that read every topic's rows: a watch that saw nothing fails
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        since: dict[tuple[str, int], float] = {}
        while not self.stop.wait(0.4):
            try:
                rows = [r for t in self.topics for r in _rows(self.stack, t)]
                online = _online(self.stack)
            except (OSError, ValueError, KeyError):
                continue
            now, self.samples = time.monotonic(), self.samples + 1
            for r in rows:
                p = (r["topic"], r["partition"])
                electable = r["leader"] is None and any(s in online for s in r["lrs"])
                if electable:
                    since.setdefault(p, now)
                    self.longest[p] = max(self.longest.get(p, 0.0), now - since[p])
                else:
                    since.pop(p, None)

    def finish(self) -> dict[tuple[str, int], float]:
        self.stop.set()
        self.thread.join(10)
        return self.longest


# ---- faults ----------------------------------------------------------------------------

def spu_outage(stack: Stack, rng: random.Random) -> str:
    spu = rng.randrange(12)
    stack.api("POST", f"spus/{spu}/offline/")
    time.sleep(rng.uniform(2, 4))
    stack.api("POST", f"spus/{spu}/online/")
    return f"SPU {spu} offline and back"


def election_with_worker_killed(stack: Stack, rng: random.Random) -> str:
    """Issue 18's stranded-timer case: a candidate's loop stopped, a leader's SPU offline,
    the worker SIGKILLed while the elections wait for their timers."""
    killed, offline = rng.sample(range(12), 2)
    stack.api("POST", f"spus/{killed}/kill/")
    threading.Thread(target=stack.api, args=("POST", f"spus/{offline}/offline/"),
                     daemon=True).start()
    time.sleep(2.5)
    kill_worker(stack)
    time.sleep(rng.uniform(4, 6))
    for spu in (killed, offline):
        stack.api("POST", f"spus/{spu}/online/")
    return f"SPU {killed} loop killed, SPU {offline} offline, worker SIGKILL mid-election"


def election_with_worker_paused(stack: Stack, rng: random.Random) -> str:
    spu = rng.randrange(12)
    threading.Thread(target=stack.api, args=("POST", f"spus/{spu}/offline/"),
                     daemon=True).start()
    time.sleep(0.3)
    pause = pause_worker(stack, LEASE_S + rng.uniform(1, 3))
    stack.api("POST", f"spus/{spu}/online/")
    return f"SPU {spu} offline, worker SIGSTOP for {pause:.1f} s mid-election"


def redis_killed(stack: Stack, rng: random.Random) -> str:
    os.kill(stack.child("redis-server").pid, signal.SIGKILL)
    time.sleep(rng.uniform(3, 5))
    return "redis-server SIGKILL (the supervisor restarts it from its append-only file)"


def unclean_election(stack: Stack, rng: random.Random) -> str:
    """Every LRS member of one partition down, a replica outside the LRS back, and the
    operator forcing it to lead: the offsets it lacks are given up, and reported."""
    p = rng.randrange(PARTITIONS)
    row = next(r for r in _rows(stack, TOPIC) if r["partition"] == p)
    if row["leader"] is None:
        return f"unclean election skipped: {TOPIC}/{p} already leaderless"
    followers = [s for s in row["replicas"] if s != row["leader"]]
    for spu in followers:
        stack.api("POST", f"spus/{spu}/offline/")
    time.sleep(1.5)  # the leader alone takes writes (min LRS 1)
    # The plan's moves may have changed the set meanwhile (a replica added to the LRS, the
    # leadership moved): its other replicas now go down too, or it is elected cleanly.
    now = next(r for r in _rows(stack, TOPIC) if r["partition"] == p)
    leader = now["leader"] if now["leader"] is not None else row["leader"]
    followers += [s for s in dict.fromkeys([*row["replicas"], *now["replicas"]])
                  if s != leader and s not in followers]
    for spu in followers[len(row["replicas"]) - 1:]:
        stack.api("POST", f"spus/{spu}/offline/")
    # The one brought back must still be a replica (a move may have taken the first out).
    followers.sort(key=lambda s: s not in now["replicas"])
    stack.api("POST", f"spus/{leader}/offline/")
    _until_leaderless(stack, p)  # the next tick applies it: an election before finds it led
    stack.api("POST", f"spus/{followers[0]}/online/")
    deadline = time.monotonic() + 10
    while True:  # its return too: until the tick applies it, no replica is live
        status, body = stack.api("POST", "leaders/elect/", {"type": "unclean", "topic": TOPIC,
                                                            "partition": p})
        if "no replica is live" not in str(body) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    for spu in (leader, *followers[1:]):
        stack.api("POST", f"spus/{spu}/online/")
    return f"unclean election of {TOPIC}/{p}: {status} {body.get('error', '')}".strip()


def hot_redis_killed(stack: ShardedStack, rng: random.Random) -> str:
    """Every hot-state server SIGKILLed, in a random order a moment apart, and each
    started again from its append-only file a few seconds later: the outages overlap."""
    order = rng.sample(range(len(stack.hot)), len(stack.hot))
    for n in order:
        stack.hot[n].send(signal.SIGKILL)
        time.sleep(rng.uniform(0.5, 2))
    time.sleep(rng.uniform(2, 4))
    for n in order:
        stack.hot[n].restart()
        time.sleep(rng.uniform(0.5, 2))
    return f"hot-state Redis {order} SIGKILL, each restarted from its append-only file"


def hot_home_redis_killed(stack: ShardedStack, rng: random.Random) -> str:
    """The first hot-state server alone (the cluster lease, the meta, the log and its shards'
    sets) SIGKILLed and started again from its append-only file: a log that came back whole
    is checked by the coordinator's quiet tick, with no whole tick."""
    stack.hot[0].send(signal.SIGKILL)
    time.sleep(rng.uniform(1, 3))
    stack.hot[0].restart()
    return "the first hot-state Redis SIGKILL, restarted from its append-only file"


def hot_redis_paused(stack: ShardedStack, rng: random.Random) -> str:
    """Every hot-state server SIGSTOPped in turn, some past the clients' socket timeout
    (5 s): a command that timed out may still run when its server continues."""
    said = []
    for n in rng.sample(range(len(stack.hot)), len(stack.hot)):
        pause = rng.uniform(2, 7)
        stack.hot[n].send(signal.SIGSTOP)
        time.sleep(pause)
        stack.hot[n].send(signal.SIGCONT)
        said.append(f"{n} for {pause:.1f} s")
        time.sleep(rng.uniform(0.5, 2))
    return f"hot-state Redis SIGSTOP: {', '.join(said)}"


def topic_added(stack: Stack, rng: random.Random, seconds: float = 30) -> str:
    """A topic created while the others are busy (sharded, its sets are made under every
    lease with no other set loaded): every partition of it has a leader soon after."""
    name = f"added-{rng.randrange(10**6)}"
    _created(stack, name, 4, seconds)
    return f"topic {name} created: every partition led"


def topic_made_again(stack: Stack, rng: random.Random, seconds: float = 30) -> str:
    """A topic created, then deleted and created again under its name with another
    partition count, with no wait between the two (sharded, dropped by one unit alone and
    made by the next): every partition of the new one has a leader soon after, and none of
    the old one's is left."""
    name = f"again-{rng.randrange(10**6)}"
    _created(stack, name, 2, seconds)
    gone = stack.manage("topic", "delete", name)
    assert gone.returncode == 0, gone.stderr[-2000:]
    _created(stack, name, 5, seconds)
    return f"topic {name} deleted and created again: every partition of the new one led"


def _created(stack: Stack, name: str, partitions: int, seconds: float) -> None:
    made = stack.manage("topic", "create", name, "--partitions", str(partitions),
                        "--replication", "2")
    assert made.returncode == 0, made.stderr[-2000:]
    deadline, rows = time.monotonic() + seconds, []
    while time.monotonic() < deadline:
        rows = _rows(stack, name)
        if len(rows) == partitions and all(r["leader"] is not None for r in rows):
            return
        time.sleep(0.3)
    raise AssertionError(f"topic {name}: not every one of {partitions} partitions led after "
                         f"{seconds} s: {rows}")


def _until_leaderless(stack: Stack, partition: int, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if any(r["partition"] == partition and r["leader"] is None for r in _rows(stack, TOPIC)):
            return
        time.sleep(0.2)


FAULTS = [spu_outage, election_with_worker_killed, election_with_worker_paused,
          redis_killed, unclean_election]
# The hot state spread over servers of its own (ShardedStack.hot): they fail too.
SPREAD_FAULTS = [*FAULTS, hot_redis_killed, hot_home_redis_killed, hot_redis_paused,
                 topic_added, topic_made_again]


def campaign(stack: Stack, seconds: float, rng: random.Random,
             faults: list | None = None) -> list[str]:
    """Every kind of ``faults`` once in a random order, then random draws until ``seconds``."""
    faults = FAULTS if faults is None else faults
    log, start = [], time.monotonic()
    schedule = rng.sample(faults, len(faults))
    while time.monotonic() < start + seconds or schedule:
        fault = schedule.pop(0) if schedule else rng.choice(faults)
        at = time.monotonic() - start
        try:
            done = fault(stack, rng)
        except (OSError, ValueError, StopIteration) as exc:
            done = f"{fault.__name__}: the API did not answer ({exc})"
        log.append(f"{at:6.1f} s  {done}")
        time.sleep(rng.uniform(1, 3))
    return log


def spu_loop_killed(stack: Stack, rng: random.Random) -> str:
    spu = rng.randrange(12)
    stack.api("POST", f"spus/{spu}/kill/")
    time.sleep(rng.uniform(4, 7))
    stack.api("POST", f"spus/{spu}/online/")
    return f"SPU {spu} loop killed, brought back"


def worker_killed(stack: Stack, rng: random.Random) -> str:
    kill_worker(stack)
    time.sleep(rng.uniform(3, 6))
    return "worker SIGKILL (supervisor restarts it)"


def pause_worker(stack: Stack, seconds: float) -> float:
    """SIGSTOP the worker for ``seconds`` (past its lease: another holder may step in)."""
    worker = stack.tick_owner()
    os.killpg(worker.pid, signal.SIGSTOP)
    time.sleep(seconds)
    os.killpg(worker.pid, signal.SIGCONT)
    return seconds


def kill_worker(stack: Stack) -> None:
    """SIGKILL the worker (the supervisor restarts it)."""
    os.killpg(stack.tick_owner().pid, signal.SIGKILL)


def worker_paused(stack: Stack, rng: random.Random) -> str:
    pause = pause_worker(stack, LEASE_S + rng.uniform(1, 4))
    return f"worker SIGSTOP for {pause:.1f} s"

