"""Two roles (DESIGN/issue 4): viewers read, operators also change things."""
from __future__ import annotations

from django.contrib.auth.models import Group, Permission

OPERATORS = "operators"
VIEWERS = "viewers"
OPERATE_PERMISSION = "cluster.operate_cluster"


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
