"""Set up Django on a throwaway SQLite database for a benchmark script."""
from __future__ import annotations

import os
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A benchmark script is a shell, as a command is: it binds the store once for its main
# thread (a key made outside any binding is refused); a thread of its own binds its own.
_shell = ExitStack()


def bind_the_store() -> None:
    """Bind the store for this thread as a shell does (the id read at the first key)."""
    from cluster.engine.engine import current

    _shell.enter_context(current().serving())


def setup_throwaway_django() -> Path:
    sys.path.insert(0, str(ROOT))
    workdir = Path(tempfile.mkdtemp(prefix="bench-"))
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{workdir / 'bench.sqlite3'}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    bind_the_store()
    return workdir


def setup_bench_store(tmp: Path, postgres: bool, name: str, sqlite: Path | None = None,
                      **env: str) -> object:
    """A private Redis and a throwaway store (PostgreSQL database ``bench_<name>_<pid>`` or
    SQLite under ``tmp``), set before Django reads its settings; returns the Redis process."""
    sys.path.insert(0, str(ROOT))
    from webapp.redis_server import start_private_redis

    redis_proc, url = start_private_redis(tmp / "redis")
    os.environ.update(VAR_DIR=str(tmp), REDIS_URL=url, DJANGO_SETTINGS_MODULE="webapp.settings",
                      **env)
    os.environ["DATABASE_URL"] = (f"postgres://postgres@127.0.0.1:5432/bench_{name}_{os.getpid()}"
                                  if postgres else f"sqlite:///{sqlite or tmp / 'bench.sqlite3'}")
    import django
    from django.core.management import call_command

    django.setup()
    if postgres:
        from django.db import connection
        connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
        # Subprocesses must reach the database the test runner named.
        os.environ["DATABASE_URL"] = (
            f"postgres://postgres@127.0.0.1:5432/{connection.settings_dict['NAME']}")
    call_command("migrate", "--noinput", verbosity=0)
    bind_the_store()
    return redis_proc
