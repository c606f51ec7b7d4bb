"""Accounts and their role: adding a viewer or an operator is a use case, not a shell session."""
from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from cluster.errors import Conflict, InvalidInput, NotFound
from cluster.roles import OPERATORS, VIEWERS, ensure_groups
from cluster.services.events import Actor, log_event

# A role is one of the two groups (cluster/roles.py); "none" takes both away.
ROLE_GROUPS = {"viewer": VIEWERS, "operator": OPERATORS, "none": None}


@transaction.atomic
def user_add(*, username: str, role: str, by: Actor = None) -> str:
    """Create the account with ``role`` and a random password; returns the password."""
    _check_username(username)
    users = get_user_model()
    if users.objects.filter(username=username).exists():
        raise Conflict(f"user {username} exists; `user role {username} {role}` gives it "
                       f"the role", field="username")
    password = secrets.token_urlsafe(12)
    user = users.objects.create_user(username=username, password=password)
    _set_role(user, role)
    log_event(by, "user", username, "create", {"role": role})
    return password


@transaction.atomic
def user_set_role(*, username: str, role: str, by: Actor = None) -> None:
    """Make the account a viewer or an operator (the other role goes), or neither."""
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound(f"no user named {username}", field="username")
    _set_role(user, role)
    log_event(by, "user", username, "role", {"role": role})


def user_roles() -> list[tuple[str, str]]:
    """(username, role) of every account, for ``user list``; in both groups, operator wins."""
    operators, viewers = ensure_groups()
    ops, views = (set(group.user_set.values_list("username", flat=True))
                  for group in (operators, viewers))
    names = get_user_model().objects.order_by("username").values_list("username", flat=True)
    return [(name, "operator" if name in ops else "viewer" if name in views else "none")
            for name in names]


def _set_role(user, role: str) -> None:
    if role not in ROLE_GROUPS:
        raise InvalidInput(f"role must be one of {', '.join(ROLE_GROUPS)}", field="role")
    operators, viewers = ensure_groups()
    user.groups.remove(operators, viewers)
    if ROLE_GROUPS[role] is not None:
        user.groups.add(operators if role == "operator" else viewers)


def _check_username(username: str) -> None:
    field = get_user_model()._meta.get_field("username")
    try:
        field.clean(username, None)
    except ValidationError as exc:
        raise InvalidInput(f"username {username[:40]!r}: {' '.join(exc.messages)}",
                           field="username") from None
