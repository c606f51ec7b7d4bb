"""Redis URLs as they may be shown: in output, the database and events.

Here, not in webapp/redis_server.py (which re-exports it), so that the adapters that
name the Redis they reach import no webapp (tests/unit/webapp/test_app_layering.py).
"""
from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def redacted(url: str) -> str:
    """``url`` with its password masked (for output, the database and events)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@" + (f"[{host}]" if ":" in host else host) + (
        f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))
