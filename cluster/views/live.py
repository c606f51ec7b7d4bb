"""What a live page embeds: the sequence of each group its data reflects.

Read before the page's data, so a change made between the render and the
socket's hello shows as a hello sequence beyond the embedded one, and the
page resyncs that group (static/js/live.js) instead of missing the change.
"""
from __future__ import annotations

import logging

import redis
from django.conf import settings

from cluster.adapters.live_batches import current_seqs
from cluster.live import CLUSTER_GROUP

log = logging.getLogger(__name__)


def rendered_seqs(*groups: str) -> dict[str, int]:
    """The groups' current sequences (``cluster`` when none is named); {} if Redis is away."""
    if not settings.LIVE_UPDATES:
        return {}  # nothing is numbered: the page takes the hello's sequences as they come
    try:
        return current_seqs(groups or [CLUSTER_GROUP])
    except redis.RedisError:
        # The page still renders; without a number it takes the hello's as its own.
        log.warning("live sequences unavailable", exc_info=True)
        return {}
