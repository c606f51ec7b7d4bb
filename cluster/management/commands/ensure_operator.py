"""Create the operator account once, with a random password kept under var/."""
from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from cluster.roles import make_operator


class Command(BaseCommand):
    help = "Create the 'operator' account if missing; its password goes to var/."

    def handle(self, *args: Any, **options: Any) -> None:
        path = settings.VAR_DIR / "operator-password.txt"
        users = get_user_model()
        if users.objects.filter(username="operator").exists() and path.exists():
            self.stdout.write(f"operator account exists; password in {path}")
            return
        password = secrets.token_urlsafe(12)
        user, _ = users.objects.get_or_create(username="operator")
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        make_operator(user)
        path.write_text(password + "\n")
        path.chmod(0o600)
        self.stdout.write(f"operator account ready; password in {path}")
