"""WebSocket consumer: authenticate at connect, join the page's groups, say hello, forward."""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import parse_qs

import redis
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings

from cluster.adapters.live_seqs import current_seqs, unwatch, watch
from cluster.core.names import name_problem
from cluster.live import (BLOCK, CLUSTER_GROUP, FORMAT_VERSION, block_groups, parse_group,
                          topic_group)
from cluster.roles import can_read

# Close code for "not logged in": pages stop retrying fast on it.
POLICY_VIOLATION = 4401
# Close code for a path or topic name no page uses.
NOT_FOUND = 4404
# Signed in, but in neither the viewers nor the operators group.
FORBIDDEN = 4403
# Block groups a cluster page may add (the partitions page: one per row at most).
MAX_EXTRA_BLOCKS = 100
T = TypeVar("T")
log = logging.getLogger(__name__)


def _int(query: dict[str, list[str]], name: str, default: int) -> int:
    raw = query.get(name, [""])[0]
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 10 else default


def groups_for(topic: str | None, query_string: bytes) -> list[str] | None:
    """``cluster`` (plus ``?groups=`` block groups), or a topic's group plus the blocks of
    the partitions its page shows; None for anything no page asks for."""
    query = parse_qs(query_string.decode("latin-1"))
    if topic is None:
        return _cluster_groups(query)
    if name_problem(topic):
        return None
    first, count = _int(query, "first", 0), _int(query, "count", BLOCK)
    return [topic_group(topic), *block_groups(topic, first, count)]


def _cluster_groups(query: dict[str, list[str]]) -> list[str] | None:
    """The partitions page lists rows of any topic: it adds the block groups of its rows."""
    extra = [g for g in query.get("groups", [""])[0].split(",") if g]
    if len(extra) > MAX_EXTRA_BLOCKS or any(_block_of(g) is None for g in extra):
        return None
    return [CLUSTER_GROUP, *dict.fromkeys(extra)]


def _block_of(group: str) -> int | None:
    parsed = parse_group(group)
    return parsed[1] if parsed is not None else None


# How long a user's reader role, once looked up, answers for their next sockets.
READER_CHECK_TTL_S = 5.0
_readers: dict[tuple, tuple[bool, float]] = {}


def _store_namespace() -> str:
    from cluster.ports import store_namespace

    return store_namespace()


def _in_store(store: str, call: Callable[[list[str]], T], groups: list[str]) -> T:
    """``call(groups)`` with the socket's store bound (a socket is a shell: nothing binds
    it before it)."""
    from cluster.ports import bound_to_store

    with bound_to_store(store):
        return call(groups)


async def may_read(user: Any) -> bool:
    """``can_read`` through a short per-process memo: a burst of pages of one user (a
    wall of screens, every tab reconnecting after a restart) asks the database once,
    not once per socket on the one thread Django's ORM runs on. A role taken away
    refuses new sockets at most ``READER_CHECK_TTL_S`` later."""
    now = time.monotonic()
    # The sign-up time too: a test database hands a new user the id of a deleted one.
    key = (user.pk, user.get_username(), getattr(user, "date_joined", None))
    known = _readers.get(key)
    if known is not None and known[1] > now:
        return known[0]
    allowed = await sync_to_async(can_read)(user)
    if len(_readers) > 10_000:
        _readers.clear()
    _readers[key] = (allowed, now + READER_CHECK_TTL_S)
    return allowed


async def refused_reader(consumer: AsyncJsonWebsocketConsumer) -> bool:
    """Close a socket whose user may not read (4401 anonymous, 4403 in no reader group):
    reading needs the viewers or operators group, on a socket as on a page."""
    user = consumer.scope.get("user")
    if user is None or not user.is_authenticated:
        await consumer.close(code=POLICY_VIOLATION)
        return True
    if not await may_read(user):
        await consumer.close(code=FORBIDDEN)
        return True
    return False


class LiveConsumer(AsyncJsonWebsocketConsumer):
    """ws/cluster/ joins ``cluster``; ws/topics/<name>/?first=&count= joins the topic's groups."""

    groups_joined: list[str] = []
    store = ""  # the store's id, read at connect
    beacon: asyncio.Task | None = None

    async def connect(self) -> None:
        if await refused_reader(self):
            return
        name = self.scope["url_route"]["kwargs"].get("name")
        groups = groups_for(name, self.scope.get("query_string", b""))
        if groups is None:
            await self.close(code=NOT_FOUND)
            return
        for group in groups:
            await self.channel_layer.group_add(group, self.channel_name)
        # The socket's Redis keys name the store (redis_keys.py): its id read once, here.
        self.store = await database_sync_to_async(_store_namespace)()
        # Counted in before the hello reads the sequences (live_seqs says why).
        await sync_to_async(_in_store, thread_sensitive=False)(self.store, watch, groups)
        self.groups_joined = groups
        await self.accept()
        # Redis only: no need to queue behind the ORM on the one thread-sensitive executor.
        seqs = await sync_to_async(_in_store, thread_sensitive=False)(
            self.store, current_seqs, groups)
        await self.send_json({"type": "live.hello", "v": FORMAT_VERSION, "groups": seqs})
        if settings.LIVE_BEACON_S > 0:
            self.beacon = asyncio.ensure_future(self._beacons(settings.LIVE_BEACON_S))

    async def _beacons(self, every_s: float) -> None:
        """Each group's sequence, every ``every_s``: a message numbered and then lost (its
        sender killed before it went out) would otherwise leave the page on old data
        until the group's next change, which may never come (static/js/live.js)."""
        while True:
            await asyncio.sleep(every_s)
            try:
                seqs = await sync_to_async(_in_store, thread_sensitive=False)(
                    self.store, current_seqs, self.groups_joined)
            except redis.RedisError:  # Redis away: the next beacon, or the reconnect, tells
                log.warning("live beacon failed", exc_info=True)
                continue
            await self.send_json({"type": "live.seqs", "v": FORMAT_VERSION, "groups": seqs})

    async def disconnect(self, code: int) -> None:
        if self.beacon is not None:
            self.beacon.cancel()
        if self.groups_joined:
            await sync_to_async(_in_store, thread_sensitive=False)(
                self.store, unwatch, self.groups_joined)
        for group in self.groups_joined:
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """Pages only listen; anything they send is ignored."""

    async def forward(self, event: dict[str, Any]) -> None:
        await self.send_json(event)

    async def live_update(self, event: dict[str, Any]) -> None:
        """Batches arrive encoded once by their sender (cluster/adapters/live_batches.py)."""
        await self.send(text_data=event["text"])

    cluster_changed = forward
    partition_changed = forward
    plan_progress = forward


class UnknownPath(AsyncJsonWebsocketConsumer):
    """Any other WebSocket path is closed politely instead of failing the handshake."""

    async def connect(self) -> None:
        await self.close(code=NOT_FOUND)
