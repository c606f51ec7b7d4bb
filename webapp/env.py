"""Small readers of the environment that fail loudly on a bad value."""
from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse


class EnvError(ValueError):
    pass


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise EnvError(f"{name}={raw!r} is not a boolean (use true/false)")


def env_int(name: str, default: int, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise EnvError(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise EnvError(f"{name}={value} must be at least {minimum}")
    return value


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise EnvError(f"{name}={raw!r} is not a number") from None


def env_url(name: str, default: str, schemes: tuple[str, ...]) -> str:
    raw = os.environ.get(name) or default
    parsed = urlparse(raw)
    if parsed.scheme not in schemes:
        raise EnvError(f"{name}={raw!r} must use one of: {', '.join(schemes)}")
    return raw


def env_url_list(name: str, schemes: tuple[str, ...]) -> list[str]:
    """Comma-separated URLs (empty or unset: none), each checked like ``env_url``."""
    raw = os.environ.get(name) or ""
    urls = [u.strip() for u in raw.split(",") if u.strip()]
    for url in urls:
        if urlparse(url).scheme not in schemes:
            raise EnvError(f"{name}: {url!r} must use one of: {', '.join(schemes)}")
    return urls


def env_token(name: str, default: str) -> str:
    """A short name that goes into Redis keys: letters, digits, ``-`` and ``_`` only."""
    raw = os.environ.get(name) or default
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", raw):
        raise EnvError(f"{name}={raw!r} must be 1-64 letters, digits, '-' or '_'")
    return raw


def database_token(database: Mapping[str, Any]) -> str:
    """Names one installation by the database it stores into: same database, same token."""
    where = "|".join(str(database.get(k) or "") for k in ("ENGINE", "HOST", "PORT", "NAME"))
    return hashlib.sha256(where.encode()).hexdigest()[:12]


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = os.environ.get(name) or default
    if raw not in choices:
        raise EnvError(f"{name}={raw!r} must be one of: {', '.join(choices)}")
    return raw
