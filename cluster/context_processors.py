"""Every page learns whether the replication engine has stalled (base.html's banner).

A stalled engine once left every page saying "live" (issue 35). A Redis that cannot be
read, or a database that fails, says nothing here: /readyz names those.
"""
from __future__ import annotations

import redis
from django.db import DatabaseError
from django.http import HttpRequest

from cluster.services.tick_health import Stall, stall


def engine_stall(request: HttpRequest) -> dict[str, Stall | None]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"engine_stall": None}
    try:
        found = stall()
    except (redis.exceptions.RedisError, DatabaseError):
        return {"engine_stall": None}
    # An engine that never ticked and never failed is starting (or has no worker): the
    # worker's absence is /readyz's to name, not a stall to show.
    if found is not None and found.since is None and not found.failed_in_a_row:
        found = None
    return {"engine_stall": found}
