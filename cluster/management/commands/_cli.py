"""What every fluvio-like command shares: subcommands, --json, exit 2 on bad input."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from cluster.core.names import name_problem
from cluster.errors import DomainError, Unavailable

REFUSED = 1
BAD_INPUT = 2
NO_REDIS = 1


class SubcommandCommand(BaseCommand):
    """Dispatches ``manage.py NAME ACTION ...`` to ``handle_<action>``."""

    requires_system_checks: list = []
    # Actions that read or step the hot state: they check Redis answers before changing anything.
    redis_actions: frozenset[str] = frozenset()
    # ...and that the Redis is this store's (store_identity.py), before anything is written.
    checks_identity = True

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True,
                                        parser_class=_parser_class(parser))
        self.add_actions(actions)

    def add_actions(self, actions: Any) -> None:
        raise NotImplementedError

    def check_input(self, **options: Any) -> None:
        """Refuse (``fail``) what no handler could use; runs before Redis is asked."""

    def handle(self, *args: Any, **options: Any) -> None:
        # Every action's Redis keys name its store, read at the first one (redis_keys.py);
        # an action that only reads rows starts without the engine (composition/startup.py).
        from composition.startup import store_only_command

        if store_only_command():
            self._handle(**options)
            return
        from cluster.ports import engine

        with engine().serving():
            self._handle(**options)

    def _handle(self, **options: Any) -> None:
        handler = getattr(self, f"handle_{options['action'].replace('-', '_')}")
        self.check_input(**options)  # bad input is exit 2 whether Redis answers or not
        if options["action"] in self.redis_actions:
            unreachable = reachable_redis_or_reason()
            if unreachable:
                raise CommandError(unreachable, returncode=NO_REDIS)
        try:
            if options["action"] in self.redis_actions and self.checks_identity:
                check_hot_state_identity()
            handler(**options)
        except Unavailable as exc:
            raise CommandError(exc.message, returncode=REFUSED) from None
        except DomainError as exc:
            raise CommandError(exc.message, returncode=BAD_INPUT) from None
        except TimeoutError as exc:  # the hot-state lease stayed busy, or was lost: nothing saved
            raise CommandError(str(exc), returncode=NO_REDIS) from None
        except Exception as exc:
            redis_down = _redis_down(exc)
            if redis_down is None:
                raise
            raise CommandError(redis_down, returncode=NO_REDIS) from None

    def emit(self, data: object, as_json: bool, text: str) -> None:
        self.stdout.write(json_text(data) if as_json else text)

    def fail(self, message: str) -> None:
        raise CommandError(message, returncode=BAD_INPUT)

    def read_text(self, path: Path, what: str = "text") -> str:
        """A file the command was given, as UTF-8 text; bad input (exit 2) if it cannot be
        read or is not text (``what`` names the kind of file expected)."""
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}",
                               returncode=BAD_INPUT) from None
        except UnicodeDecodeError:
            raise CommandError(f"{path} is not {what} (not UTF-8 text)",
                               returncode=BAD_INPUT) from None

    def require_name(self, name: str, kind: str = "topic") -> None:
        """A name no object can have is bad input, not an empty answer."""
        problem = name_problem(name, kind)
        if problem:
            self.fail(problem)


# The Redis adapters load only for the actions that ask Redis: `spu list` starts without
# the Redis client (composition/startup.py).
def reachable_redis_or_reason() -> str | None:
    """None when Redis answers a PING, else the one line that says why not."""
    from cluster.adapters.redis_keys import reachable

    return reachable()


def check_hot_state_identity() -> str:
    """Refuse a Redis that is not this store's (store_identity.py); the store's id."""
    from cluster.engine import store_identity

    return store_identity.check_hot_state_identity()


def _redis_down(exc: Exception) -> str | None:
    """Why Redis went away or stopped answering midway, if ``exc`` says it did.

    Only a handler that loaded the Redis client can have raised its errors, so a command
    that never did (`spu list`) never imports it here either."""
    if "redis" not in sys.modules:
        return None
    from cluster.adapters.redis_keys import REDIS_DOWN, unreachable_reason

    return unreachable_reason(exc) if isinstance(exc, REDIS_DOWN) else None


# Past this size JSON is for programs, not eyes: indenting goes through the
# pure-Python encoder, which took most of a second at 100,000 partitions.
PRETTY_JSON_UP_TO = 64 * 1024


def json_text(data: object) -> str:
    """Indented when small enough to read, compact (C encoder) when large."""
    compact = json.dumps(data, separators=(",", ":"))
    return json.dumps(data, indent=2) if len(compact) <= PRETTY_JSON_UP_TO else compact


def _parser_class(parser: CommandParser) -> type:
    # Subparsers must be CommandParsers too, so a usage error exits 2 with
    # the reason instead of a traceback from called_from_command_line=None.
    class SubParser(CommandParser):
        def __init__(self, **kwargs: Any):
            kwargs.setdefault("called_from_command_line",
                              getattr(parser, "called_from_command_line", None))
            super().__init__(**kwargs)
    return SubParser


def table(rows: list[list[object]], header: list[str]) -> str:
    cells = [header] + [[("" if c is None else str(c)) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                     for r in cells)
