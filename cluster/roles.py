"""Two roles (DESIGN/issue 4): viewers read, operators also change things.

A signed-in user in neither group reads nothing (issue 10): an account is not a role.
"""
from __future__ import annotations

from django.contrib.auth.models import Group, Permission

OPERATORS = "operators"
VIEWERS = "viewers"
OPERATE_PERMISSION = "cluster.operate_cluster"
NO_ROLE = ("Your account has no role yet: an operator must add it to the viewers or "
           "operators group.")


def ensure_groups() -> tuple[Group, Group]:
    operators, _ = Group.objects.get_or_create(name=OPERATORS)
    viewers, _ = Group.objects.get_or_create(name=VIEWERS)
    operators.permissions.add(Permission.objects.get(
        codename="operate_cluster", content_type__app_label="cluster"))
    return operators, viewers


def make_operator(user) -> None:
    operators, _ = ensure_groups()
    user.groups.add(operators)


def make_viewer(user) -> None:
    _, viewers = ensure_groups()
    user.groups.add(viewers)


def is_operator(user) -> bool:
    return bool(user and user.is_authenticated and user.has_perm(OPERATE_PERMISSION))


def can_read(user) -> bool:
    """Viewers and operators read the cluster; superusers hold every permission."""
    if not (user and user.is_authenticated):
        return False
    return is_operator(user) or user.groups.filter(name=VIEWERS).exists()
