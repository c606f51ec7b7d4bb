"""Issue 35 on a real `make run`: its Redis made to refuse writes (maxmemory, noeviction)
stalls the engine, and /readyz says so naming it; lifting the limit makes it ready
again, and nothing acknowledged before is lost. Waits are for events, with generous
bounds: how fast is a benchmark's business, not this test's."""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest
import redis

from tests.stack import Acked, Stack, lost_records

pytestmark = [pytest.mark.redis, pytest.mark.slow]
TOPIC = "stall"


def readyz(stack: Stack) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{stack.port}/readyz", timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
    except OSError as exc:
        return 0, {"error": str(exc)}


def wait_for(check, seconds: float, what: str):
    deadline, last = time.monotonic() + seconds, None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.5)
    raise AssertionError(f"never within {seconds:.0f} s: {what} (last: {last})")


def test_a_stack_whose_redis_refuses_writes_is_not_ready_naming_the_engine_then_recovers(
        tmp_path):
    stack = Stack(tmp_path)
    try:
        stack.start()
        made = stack.manage("topic", "create", TOPIC, "--partitions", "1", "--replication", "3")
        assert made.returncode == 0, made.stderr
        wait_for(lambda: readyz(stack)[0] == 200, 120, "ready")
        acked = []
        for n in range(5):
            status, body = stack.produce(TOPIC, 0, f"before-{n}")
            assert status == 200 and body["state"] == "acknowledged", body
            acked.append(Acked(0, body["base_offset"], f"before-{n}"))
        client = redis.Redis.from_url((tmp_path / "redis.url").read_text().strip())
        client.config_set("maxmemory-policy", "noeviction")
        client.config_set("maxmemory", "1")
        refused_at = time.monotonic()
        try:
            def stalled():
                status, body = readyz(stack)
                return status == 503 and "engine" in body.get("failing", []) and body
            body = wait_for(stalled, 120, "not ready, naming the engine")
            assert "engine stalled" in body["checks"]["engine"]["error"], body
            # Its broker refusing too, beat sends no tick to fail: the redis check says why.
            assert "Redis refuses writes" in body["checks"]["redis"]["error"], body
            print(f"not ready {time.monotonic() - refused_at:.1f} s after writes were "
                  f"refused: {body['failing']}: {body['checks']['engine']['error']}")
        finally:
            client.config_set("maxmemory", "0")
            client.close()
        lifted_at = time.monotonic()
        wait_for(lambda: readyz(stack)[0] == 200, 180, "ready again once writes are taken")
        print(f"ready again {time.monotonic() - lifted_at:.1f} s after the limit was lifted")
        assert lost_records(stack, TOPIC, acked) == []
    finally:
        stack.kill_all()
