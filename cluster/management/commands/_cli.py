"""What every fluvio-like command shares: subcommands, --json, exit 2 on bad input."""
from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from cluster.errors import DomainError

BAD_INPUT = 2


class SubcommandCommand(BaseCommand):
    """Dispatches ``manage.py NAME ACTION ...`` to ``handle_<action>``."""

    requires_system_checks: list = []

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True,
                                        parser_class=_parser_class(parser))
        self.add_actions(actions)

    def add_actions(self, actions: Any) -> None:
        raise NotImplementedError

    def handle(self, *args: Any, **options: Any) -> None:
        handler = getattr(self, f"handle_{options['action'].replace('-', '_')}")
        try:
            handler(**options)
        except DomainError as exc:
            raise CommandError(exc.message, returncode=BAD_INPUT) from None

    def emit(self, data: object, as_json: bool, text: str) -> None:
        self.stdout.write(json.dumps(data, indent=2) if as_json else text)

    def fail(self, message: str) -> None:
        raise CommandError(message, returncode=BAD_INPUT)


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
