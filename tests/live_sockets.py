"""Helpers for tests that open WebSockets on the ASGI app through Channels' communicator."""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
import threading
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")
LEFTOVER_S = 5.0


def as_a_shell(action: Callable[..., T]) -> Callable[..., T]:
    """``action`` as a command or a request runs it, its store bound (cluster/adapters/
    redis_keys.py): a scenario's loop runs in a thread of its own, outside the test's."""
    def shell(*args: Any, **kwargs: Any) -> T:
        from cluster.ports import engine

        with engine().serving():
            return action(*args, **kwargs)
    return shell


def run_in_fresh_loop(scenario: Callable[[], Awaitable[T]], timeout_s: float = 60) -> T:
    """Run ``scenario`` on a new loop in its own thread (Playwright's sync API may hold this
    thread's loop), bounded in time.

    Not asyncio.run: its clean-up waits without limit for the tasks a scenario leaves
    behind, and an ASGI app still inside the channel layer's receive when cancelled once
    never finished, hanging the whole suite. Leftover tasks get a few seconds, then are
    abandoned with their loop.
    """
    outcome: Future[T] = Future()

    def run() -> None:
        loop = asyncio.new_event_loop()
        try:
            outcome.set_result(loop.run_until_complete(asyncio.wait_for(scenario(), timeout_s)))
        except BaseException as error:  # handed to the caller's thread
            outcome.set_exception(error)
        finally:
            leftover = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in leftover:
                task.cancel()
            if leftover:
                loop.run_until_complete(asyncio.wait(leftover, timeout=LEFTOVER_S))
            loop.close()

    threading.Thread(target=run, name="fresh-loop", daemon=True).start()
    return outcome.result(timeout_s + LEFTOVER_S + 5)


def socket_headers(cookie: str = "") -> list[tuple[bytes, bytes]]:
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    return headers + ([(b"cookie", cookie.encode())] if cookie else [])


def session_cookie(user: Any) -> str:
    from django.conf import settings
    from django.test import Client
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


async def open_socket(application: Any, path: str, cookie: str) -> tuple[Any, dict[str, Any]]:
    """A connected communicator and the hello it got (groups joined and their sequences)."""
    from channels.testing import WebsocketCommunicator
    socket = WebsocketCommunicator(application, path, headers=socket_headers(cookie))
    connected, _ = await socket.connect()
    assert connected, f"{path} refused the socket"
    return socket, await socket.receive_json_from(timeout=30)


async def drain(socket: Any, quiet_s: float = 0.5, beacons: bool = False) -> list[dict[str, Any]]:
    """Every message until none arrives for ``quiet_s``; the sockets' beacons (``live.seqs``
    every LIVE_BEACON_S) only when asked: a loaded machine makes a scenario outlast one."""
    got = []
    # receive_nothing first: a receive that times out cancels the application.
    while not await socket.receive_nothing(timeout=quiet_s, interval=0.02):
        got.append(await socket.receive_json_from(timeout=30))
    return [m for m in got if beacons or m.get("type") != "live.seqs"]
