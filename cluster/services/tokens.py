"""API tokens: a token lives until it is revoked (docs/security.md); revoking is a use case."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction
from rest_framework.authtoken.models import Token

from cluster.errors import InvalidInput, NotFound
from cluster.services.events import Actor, log_event


@transaction.atomic
def tokens_revoke(*, username: str | None = None, every: bool = False,
                  by: Actor = None) -> int:
    """Delete one user's token, or every token; returns how many were revoked."""
    if (username is None) == (not every):
        raise InvalidInput("name a user, or revoke every token", field="username")
    query = Token.objects.all()
    if username is not None:
        if not get_user_model().objects.filter(username=username).exists():
            raise NotFound(f"no user named {username}", field="username")
        query = query.filter(user__username=username)
    revoked, _ = query.delete()
    log_event(by, "token", username or "*", "revoke", {"revoked": revoked})
    return revoked


def token_holders() -> list[tuple[str, str]]:
    """(username, created ISO time) of every live token, for ``token list``."""
    return [(name, created.isoformat()) for name, created in
            Token.objects.order_by("user__username").values_list("user__username", "created")]
