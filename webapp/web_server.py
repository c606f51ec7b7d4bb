"""The one command line of the ASGI server (daphne), for `make run`, the Procfile's
twin and the test and benchmark stacks alike.

Two of daphne's defaults refuse viewers in a burst (a thousand pages opening at
once, or reconnecting after a restart) while the engine keeps the machine busy:

* the listen backlog: ``-b``/``-p`` listen with Twisted's default of 50 pending
  connections; a burst beyond that has its handshakes dropped by the kernel and
  retried seconds later. The endpoint string asks for ``BACKLOG`` instead (the
  kernel caps it at ``net.core.somaxconn``).
* the handshake timeout: daphne closes a WebSocket the application has not
  accepted within 5 s. Accepting means a session and a role lookup and joining
  the page's groups; under a burst on a loaded machine the queue of such
  connects passes 5 s, and every socket behind it was dropped. ``CONNECT_TIMEOUT``
  gives the queue time to drain: a page waits instead of retrying (which only
  adds to the queue).
"""
from __future__ import annotations

import sys

BACKLOG = 2048
CONNECT_TIMEOUT_S = 60


def endpoint(host: str, port: int, backlog: int = BACKLOG) -> str:
    """Twisted's server string for a TCP listener on ``host`` (colons of an IPv6
    address escaped, as the string format needs)."""
    return f"tcp:port={port}:interface={host.replace(':', chr(92) + ':')}:backlog={backlog}"


def daphne_command(host: str, port: int, python: str = sys.executable) -> list[str]:
    return [python, "-m", "daphne", "-e", endpoint(host, port),
            "--websocket_connect_timeout", str(CONNECT_TIMEOUT_S), "webapp.asgi:application"]
