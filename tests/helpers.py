"""Helpers for integration tests (importable as tests.helpers)."""
from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command


def register_spus(*ids: int, rack: str = "", online: bool = False) -> list:
    """Register SPUs through the service, as every shell would."""
    from cluster.services import spu_connect, spu_register

    registered = [spu_register(spu_id=i, rack=rack) for i in ids]
    if online:
        for i in ids:
            spu_connect(spu_id=i)
    return registered


def sharded_over(request, settings, monkeypatch, shards: int, block: int = 4) -> None:
    """The engine in ``shards`` shards of ``block``-partition blocks (small, so a few
    partitions spread over them), the hot state on two Redis servers when the fixture's
    param is "two-redis" (shards 1 and 3 on the second: cluster/adapters/hot_servers.py)."""
    from cluster.adapters import shards as shards_module

    if request.param == "two-redis":
        request.getfixturevalue("two_hot_servers")
    settings.REPLICATION_SHARDS = shards
    monkeypatch.setattr(shards_module, "BLOCK", block)


def store_counts() -> dict[str, int]:
    """Row counts of the store, to assert that a refusal wrote nothing."""
    from cluster.models import ClusterState, Partition, Spu, SpuGroup, Topic

    return {"topics": Topic.objects.count(), "partitions": Partition.objects.count(),
            "spus": Spu.objects.count(), "groups": SpuGroup.objects.count(),
            "cursor": ClusterState.objects.get_or_create(pk=1)[0].assignment_cursor}


def run(*args: str) -> str:
    """A management command's stdout."""
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def refused(*args: str, code: int = 2) -> CommandError:
    """The CommandError a command raised, after checking its exit code."""
    with pytest.raises(CommandError) as error:
        call_command(*args, stdout=StringIO())
    assert error.value.returncode == code
    return error.value


def recount_partitions() -> None:
    """After a test writes partition rows straight to the store (behind the projection's
    back), count them again as ``store recount`` and the reconcile beat do."""
    from cluster.services.store import store_recount

    store_recount(by="test")


def log_dumped() -> list[dict]:
    """The metadata log as ``metadata dump --json`` prints it."""
    import json

    return json.loads(run("metadata", "dump", "--json"))


def log_head() -> int:
    """The metadata log's last offset."""
    from cluster.adapters import metadata_log
    from cluster.ports import bound_to_store

    with bound_to_store():
        return metadata_log.head()


def another_process():
    """This process's engine as another process holds it: no set cache, no offsets mirror
    of its own past (a produce from the web while the worker ticks). ``with using(...)``."""
    from cluster.adapters.set_cache import SetCache
    from cluster.engine.engine import current
    from cluster.engine.mirror import OffsetsMirror

    return current().replaced(sets=SetCache(), mirror=OffsetsMirror())


POSTGRES = os.environ.get("TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def passed_on_postgresql(test_file: str | Path, keyword: str | None, name: str, passed: int,
                         *, env: dict[str, str] | None = None) -> None:
    """Run the tests of ``test_file`` that ``keyword`` selects (None: all) in a pytest of
    their own, whose store is a fresh PostgreSQL database (``test_<name>_<pid>``, dropped
    after, whatever database the suite runs on), and check that ``passed`` of them passed."""
    import psycopg

    database = f"{name}_{os.getpid()}"
    base = POSTGRES.rsplit("/", 1)[0]
    env = {**os.environ, **(env or {}), "DATABASE_URL": f"{base}/{database}"}
    selected = ["-k", keyword] if keyword is not None else []
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly",
                               "-p", "no:cacheprovider", "-p", "no:xdist", "--create-db",
                               str(test_file), *selected], env=env,
                              capture_output=True, text=True, timeout=300)
    finally:
        with psycopg.connect(POSTGRES, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "test_{database}" WITH (FORCE)')
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"{passed} passed" in done.stdout, done.stdout[-3000:]


# A benchmark makes its own throwaway database and private Redis: none of the suite's.
_NOT_INHERITED = ("DATABASE_URL", "REDIS_URL", "VAR_DIR", "DJANGO_SETTINGS_MODULE")
_ROOT = Path(__file__).resolve().parents[1]


def run_bench(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``tests/bench/<script>`` run as a user runs it, from the repository's root, with
    none of the suite's database or Redis settings."""
    env = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
    return subprocess.run([sys.executable, str(_ROOT / "tests" / "bench" / script), *args],
                          cwd=_ROOT, env=env, capture_output=True, text=True, timeout=300)


def stored_sets(topic: str) -> dict[int, bytes]:
    """A topic's sets' statuses as Redis holds them, by partition: a row's entry where one
    overrides the set's field (cluster/adapters/status_rows.py), as every reader sees them."""
    from cluster.adapters import hot_state
    from cluster.adapters.set_loading import fetch_full

    with hot_state.bound_to_store():
        return {p: data for (_, p), data in fetch_full({topic: None})}


def stored_status(topic: str, partition: int) -> list:
    """A set's status as Redis holds it, unpacked (set_codec's fields)."""
    import msgpack

    return msgpack.unpackb(stored_sets(topic)[partition])


def assert_stored_like(topic: str, partition: int, log: list[int], start: int) -> None:
    """The set's records key holds ``log`` (its reference log, from offset ``start``) up to
    the block boundary (set_codec.apart_count), and its status names them and holds the
    ids after them: the two read together are the log. (Read from the set's server, where
    the hot state is spread over several.)"""
    from cluster.adapters import hot_servers, hot_state, shards
    from cluster.adapters.set_codec import apart_count

    count = apart_count(partition, start, len(log))
    with hot_state.bound_to_store():
        server = hot_servers.client_of(shards.server_of((topic, partition)))
        held = hot_state.records_from(server.get(hot_state.records_key(topic, partition)))
    status = stored_status(topic, partition)
    assert held == log[:count], (topic, partition, "records key")
    assert status[14] == log[count:], (topic, partition, "the status's own tail")
    assert status[16]["recs"] == [count, log[count - 1] if count else None], (topic, partition)


def watching_loads(monkeypatch, seen) -> list[int]:
    """Hand ``seen`` every hot state a unit of work loads by pick (every unit but a whole
    load), and count the whole ticks the coordinator runs (a 1 each; they still run)."""
    from cluster.adapters import hot_state
    from cluster.services import replication

    whole: list[int] = []
    load_selected, tick = hot_state.load_selected, replication.replication_tick

    def counted(*args, **kwargs):
        hot = load_selected(*args, **kwargs)
        seen(hot)
        return hot

    def whole_counted(*args, **kwargs):
        whole.append(1)
        return tick(*args, **kwargs)

    monkeypatch.setattr(hot_state, "load_selected", counted)
    monkeypatch.setattr(replication, "replication_tick", whole_counted)
    return whole


def sharded_tick(checker, now: int | None = None) -> dict | None:
    """The coordinator, then every shard's task, as the workers would run them; ``checker``
    (an InvariantChecker, which remembers HW and commits across ticks) then looks at the
    saved hot state. Returns the coordinator's work (None: it ran the whole tick)."""
    from cluster.adapters import hot_state
    from cluster.services.replication import replication_coordinate, replication_shard_tick
    from cluster.services.waiting import LocalQueue

    queue = LocalQueue()
    work = replication_coordinate(now=now, dispatch=queue)
    for shard, quotas in (work or {}).items():
        replication_shard_tick(shard, quotas=quotas, now=now, dispatch=queue)
    queue.drain()
    checker.check(hot_state.load().state)
    return work
