"""Which commands start without the engine: those that only read the store's rows.

Issue 35: every ``manage.py`` command wired the whole engine at start (the apps' ready():
the Redis client, the replication core, Prometheus, the planner's executor), a few tenths
of a second of CPU that ``spu list`` never uses. The apps skip that wiring for the actions
named here, and their commands import the services only in the handlers that call them.
Read from ``sys.argv`` because ready() runs before Django loads the command.

An action belongs here only if it reads rows and nothing else (no Redis, no follow-up, no
live message); tests/integration/test_command_startup.py runs each one as a process and
checks that it works and leaves Redis, Celery and Twisted unimported.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

STORE_ONLY_ACTIONS: dict[str, frozenset[str]] = {
    "spu": frozenset({"list"}),
    "spg": frozenset({"list"}),
    "topic": frozenset({"list", "describe"}),
}


def store_only_command(argv: Sequence[str] | None = None) -> bool:
    """True in a ``manage.py COMMAND ACTION`` process whose action only reads rows.

    Anything else (an option before the action, another program, a test run) wires the
    engine as before: an unusual command line costs start-up time, never correctness."""
    argv = sys.argv if argv is None else argv
    if len(argv) < 3 or Path(argv[0]).name != "manage.py":
        return False
    return argv[2] in STORE_ONLY_ACTIONS.get(argv[1], frozenset())
