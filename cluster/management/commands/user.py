"""``user add NAME [--role viewer|operator]``, ``user role NAME ROLE``, ``user list``.

How an operator lets someone in: ``user add alice`` makes a viewer and prints its
password once (``changepassword alice`` sets another).
"""
from __future__ import annotations

from typing import Any

from cluster.management.commands._cli import SubcommandCommand, table
from cluster.services.users import ROLE_GROUPS, user_add, user_roles, user_set_role


class Command(SubcommandCommand):
    help = "Add accounts and give them the viewer or operator role."

    def add_actions(self, actions: Any) -> None:
        add = actions.add_parser("add", help="create an account with a random password")
        add.add_argument("username")
        add.add_argument("--role", choices=["viewer", "operator"], default="viewer")
        add.add_argument("--json", action="store_true")
        role = actions.add_parser("role", help="change an account's role")
        role.add_argument("username")
        role.add_argument("role", choices=list(ROLE_GROUPS))
        listing = actions.add_parser("list", help="accounts and their role")
        listing.add_argument("--json", action="store_true")

    def handle_add(self, username: str, role: str, json: bool, **_: Any) -> None:
        password = user_add(username=username, role=role, by="cli")
        self.emit({"user": username, "role": role, "password": password}, json,
                  f"{role} {username} added; password: {password}\n"
                  f"(shown once: hand it over; `manage.py changepassword {username}` sets another)")

    def handle_role(self, username: str, role: str, **_: Any) -> None:
        user_set_role(username=username, role=role, by="cli")
        self.stdout.write(f"{username} is now {'in no role' if role == 'none' else role}")

    def handle_list(self, json: bool, **_: Any) -> None:
        rows = user_roles()
        self.emit([{"user": u, "role": r} for u, r in rows], json,
                  table([list(r) for r in rows], ["USER", "ROLE"]))
