"""SPU rules: endpoints, and the connection manager's admission (003)."""
from __future__ import annotations

import re
from collections.abc import Collection
from enum import Enum

MAX_SPU_ID = 2**31 - 1
MAX_ENDPOINT_LENGTH = 255
# Both checked with fullmatch: under .match, "$" also matches before a trailing newline.
_HOST_PORT = re.compile(r"^(?P<host>[A-Za-z0-9.\-]+|\[[0-9a-fA-F:]+\]):(?P<port>\d{1,5})$")
_RACK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]{0,62}$")


class SpuResolution(str, Enum):
    INIT = "Init"
    ONLINE = "Online"
    OFFLINE = "Offline"


class SpuType(str, Enum):
    CUSTOM = "custom"
    MANAGED = "managed"


def endpoint_problem(value: str, label: str) -> str | None:
    if len(value) > MAX_ENDPOINT_LENGTH:
        return (f"{label} endpoint is {len(value):,} characters long; "
                f"at most {MAX_ENDPOINT_LENGTH} are accepted")
    match = _HOST_PORT.fullmatch(value)
    if not match or not 1 <= int(match["port"]) <= 65535:
        return f"{label} endpoint {value!r} must be HOST:PORT with a port 1-65535"
    return None


def rack_problem(rack: str) -> str | None:
    if not _RACK.fullmatch(rack):
        return (f"rack {rack!r} must be 1-63 letters, digits, '.', '_' or '-', "
                f"starting with a letter or digit")
    return None


def spu_id_problem(spu_id: int) -> str | None:
    if not 0 <= spu_id <= MAX_SPU_ID:
        return f"SPU id must be between 0 and {MAX_SPU_ID}"
    return None


def admit_connection(spu_id: int, registered: Collection[int]) -> str | None:
    """Connection manager: only registered SPUs may join; else the refusal."""
    if spu_id not in registered:
        return f"SPU {spu_id} is not registered; register it before it joins"
    return None
