"""Django's ``shell`` with the store bound: what it runs makes hot-state keys as a command
does (cluster/adapters/redis_keys.py: a key made outside any binding is refused)."""
from __future__ import annotations

from typing import Any

from django.core.management.commands.shell import Command as DjangoShell


class Command(DjangoShell):
    def handle(self, **options: Any) -> None:
        from cluster.ports import engine

        with engine().serving():
            super().handle(**options)
