"""``token list [--json]`` and ``token revoke (USERNAME | --all)``: API tokens.

A token lives until revoked; signing out of the browser does not end it.
"""
from __future__ import annotations

from typing import Any

from cluster.management.commands._cli import SubcommandCommand, table
from cluster.services.tokens import token_holders, tokens_revoke


class Command(SubcommandCommand):
    help = "List and revoke API tokens (they never expire on their own)."

    def add_actions(self, actions: Any) -> None:
        listing = actions.add_parser("list", help="users holding a token")
        listing.add_argument("--json", action="store_true")
        revoke = actions.add_parser("revoke", help="revoke one user's token, or all")
        revoke.add_argument("username", nargs="?", default=None)
        revoke.add_argument("--all", action="store_true", dest="every")

    def handle_list(self, json: bool, **_: Any) -> None:
        holders = token_holders()
        self.emit([{"user": u, "created": c} for u, c in holders], json,
                  table([list(h) for h in holders], ["USER", "CREATED"]))

    def handle_revoke(self, username: str | None, every: bool, **_: Any) -> None:
        revoked = tokens_revoke(username=username, every=every, by="cli")
        self.stdout.write(f"{revoked} token(s) revoked")
