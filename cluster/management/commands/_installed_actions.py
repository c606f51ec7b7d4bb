"""Subcommands other apps add to a cluster command (the planner's ``spu drain``).

An app installs its actions once at ready, so the dependency points from it to
the cluster and never back: the cluster's commands name no other app.
"""
from __future__ import annotations

from typing import Any, Protocol


class Action(Protocol):
    name: str

    def add_parser(self, actions: Any) -> None:
        """Add the subcommand's parser to ``actions`` (argparse subparsers)."""

    def handle(self, command: Any, **options: Any) -> None:
        """Run it; ``command`` is the host command (emit, fail, stdout)."""


_installed: dict[str, dict[str, Action]] = {}


def install(command: str, action: Action) -> None:
    _installed.setdefault(command, {})[action.name] = action


def installed(command: str) -> list[Action]:
    return list(_installed.get(command, {}).values())
