"""The Celery queue of one installation, so installations can share a Redis database.

Celery's default queue is called ``celery`` everywhere: two installations on
one Redis database would take each other's tasks (a tick of one run against
the other's store). The queue is named after the database instead, which the
web process, the worker, beat and every command of one installation share
(they read the same settings), while another installation's database differs.
CELERY_QUEUE names it explicitly when processes must agree across different
database settings.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from webapp.env import EnvError, database_token

QUEUE_PREFIX = "control-room-"
# Queue names become Redis keys and kombu routing keys: keep them plain.
_VALID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}")


def installation_queue(database: Mapping[str, Any]) -> str:
    """``control-room-<12 hex>``: the database's token, as the live namespace uses."""
    return QUEUE_PREFIX + database_token(database)


def queue_setting(explicit: str, database: Mapping[str, Any]) -> str:
    """CELERY_QUEUE when set (checked), else the database's own queue."""
    if not explicit:
        return installation_queue(database)
    if not _VALID.fullmatch(explicit):
        raise EnvError(f"CELERY_QUEUE={explicit!r} must be letters, digits and _ . : - "
                       f"(at most 100, starting with a letter or digit)")
    return explicit
