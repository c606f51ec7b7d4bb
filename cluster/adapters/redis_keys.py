"""The Redis client and the store's namespace every hot-state key lives in.

Keys read ``repl:{<store id>}:<name>``: an installation only ever touches its
own keys, however many stores share a Redis database, and the braces keep one
store's keys in one Redis Cluster slot (a fenced write is one transaction).
The store id comes from the database; the engine names where (``Engine.store_id``,
cluster/engine/engine.py). A use case binds it once for its duration (``bound_to_store``):
a unit of work binds the id its identity check read (store_identity.locked_for_this_store)
and its ``HotState`` carries it (``namespace``) past the binding; services, selectors,
views and other apps bind through the engine (``engine.bound()``, ``ports.bound_to_store``).

Every shell binds the store through the engine (``engine.serving()``, the id read at its
first key, once): a request (webapp.middleware.BindStore: pages, the API, the stall banner,
the scrape), a command (_cli.handle, and ``manage.py shell``), a task (webapp.celery.
StoreTask), a socket (cluster/consumers.py, at connect), the worker's presence thread
(cluster/tasks.py); the live flush timer runs in the context of the use case that armed it.
A key made outside any binding raises ``UnboundStore``: there is no provider behind it.

Why a ContextVar still, rather than an argument (issue 32 aims at none): ``key()`` has 45
calls in 15 modules, and a unit's keys (locks, fence, sets, records, values, tickets, the
meta, the log's append) read the binding below the HotState that carries it (``namespace``).
Passing it is a namespace argument of each of those functions: not done in this round.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import kombu.exceptions
import redis
from django.conf import settings

from cluster.redis_urls import redacted

PREFIX = "repl:"
_bound: ContextVar[_Store | None] = ContextVar("hot_state_store", default=None)
_clients: dict[tuple[object, ...], redis.Redis] = {}
# What a Redis that is down or stopped answering raises: the client's errors, and
# Celery's when a task cannot be published (kombu wraps the same timeouts).
REDIS_DOWN = (redis.exceptions.RedisError, kombu.exceptions.OperationalError)


class UnboundStore(RuntimeError):
    """A key made outside any binding: the shell that ran it (a request, a command, a task,
    a thread) bound no store. There is no fallback: a shell binds through the engine."""


class _Store:
    """One binding: where the store id is read, and the id once read (a shell binds before
    it knows whether it will make a key; the id is read at its first key, once)."""

    __slots__ = ("source", "namespace", "shell")

    def __init__(self, source: str | Callable[[], str], *, shell: bool):
        self.source = source
        self.namespace = source if isinstance(source, str) else None
        self.shell = shell  # a shell's default, which a use case's own id comes before

    def resolve(self) -> str:
        if self.namespace is None:
            self.namespace = self.source() if callable(self.source) else self.source
        return self.namespace


def store_namespace() -> str:
    bound = _bound.get()
    if bound is None:
        raise UnboundStore("a hot-state key made outside any store binding: bind the shell "
                           "that runs this (engine().bound() or engine().serving())")
    return bound.resolve()


@contextmanager
def serving(source: str | Callable[[], str]) -> Iterator[None]:
    """Bind the store for a shell (a request, a command, a task, a thread): ``source`` the
    id or where to read it, read at the first key made inside, if any (an outer binding
    is kept)."""
    with _binding(_bound.get() or _Store(source, shell=True)):
        yield


@contextmanager
def bound_to_store(store_id: str | Callable[[], str] | None = None) -> Iterator[str]:
    """Resolve the namespace once for a use case: ``store_id`` the id, or where to read it
    (the engine's ``store_id``), read only when no use case is bound yet; None: the
    shell's binding, which must be there. Nested use cases keep the outer one's; a use
    case given an id (its identity check's) binds it over a shell's default."""
    outer = _bound.get()
    if store_id is None or (outer is not None and (not outer.shell or callable(store_id))):
        yield store_namespace()
        return
    with _binding(_Store(store_id, shell=False)):
        yield store_namespace()


@contextmanager
def _binding(store: _Store) -> Iterator[None]:
    token = _bound.set(store)
    try:
        yield
    finally:
        _bound.reset(token)


def key(name: str, namespace: str | None = None) -> str:
    return f"{PREFIX}{{{namespace or store_namespace()}}}:{name}"


def home_url() -> str:
    """The hot state's first Redis: HOT_STATE_REDIS_URLS' first, else REDIS_URL (the broker's).
    Everything but the shards' own keys lives there (cluster/adapters/hot_servers.py)."""
    urls = getattr(settings, "HOT_STATE_REDIS_URLS", None) or [settings.REDIS_URL]
    return str(urls[0])


def client() -> redis.Redis:
    """The shared client of the hot state's first Redis; an operation on a Redis that stops
    answering fails after REDIS_SOCKET_TIMEOUT_S (redis.exceptions.TimeoutError) instead
    of hanging."""
    return client_at(home_url())


def client_at(url: str, socket_timeout: float | None = None) -> redis.Redis:
    """The shared client of the Redis at ``url`` (a hot-state server), made once for each
    ``socket_timeout`` (REDIS_SOCKET_TIMEOUT_S unless given: a write Redis takes longer to
    run, lease.fenced_write's largest)."""
    options = {"socket_timeout": socket_timeout or settings.REDIS_SOCKET_TIMEOUT_S,
               "socket_connect_timeout": settings.REDIS_CONNECT_TIMEOUT_S,
               "health_check_interval": settings.REDIS_HEALTH_CHECK_S}
    cache_key = (url, *options.values())
    if cache_key not in _clients:
        _clients[cache_key] = redis.Redis.from_url(url, **options)
    return _clients[cache_key]


def unreachable_reason(exc: Exception) -> str:
    """One line naming the Redis and what went wrong (a timeout, a refused connection...)."""
    return f"cannot reach Redis at {redacted(home_url())}: {exc}".splitlines()[0]


def reachable() -> str | None:
    """None when Redis answers, else a one-line reason (commands check before changing anything)."""
    try:
        client().ping()
    except redis.exceptions.RedisError as exc:
        return unreachable_reason(exc)
    return None
