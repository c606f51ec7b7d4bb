"""Who may scrape /metrics: the bearer METRICS_TOKEN, or with none set only loopback."""
from __future__ import annotations

import hmac
import ipaddress
from typing import NamedTuple

from django.conf import settings
from django.http import HttpRequest


class Refusal(NamedTuple):
    status: int
    error: str
    details: dict[str, str]


def scrape_refusal(request: HttpRequest) -> Refusal | None:
    """None if the request may scrape, else why not (a login session does not count)."""
    token = settings.METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "")
        if hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return None
        return Refusal(401, "a valid bearer token is required",
                       {"header": "Authorization: Bearer <METRICS_TOKEN>"})
    if _is_loopback(request.META.get("REMOTE_ADDR", "")):
        return None
    return Refusal(403, "without METRICS_TOKEN only loopback may scrape",
                   {"remote_addr": request.META.get("REMOTE_ADDR", "")})


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
