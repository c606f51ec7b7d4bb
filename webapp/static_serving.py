"""Static files as the app serves them itself (``make run`` has no separate web server):
gzip-compressed for clients that accept it, and cached by the browser.

The plotly bundle is 4.8 MB; uncompressed it made a first visit under load take 12.5 s
(issue 35.7). Each file is read and compressed once per process (cached by path, size
and mtime, so an edited file is read again) and served from memory after that.

Caching: ``{% static %}`` URLs carry ``?v=<content hash>`` (``VersionedStaticStorage``),
so a URL names one content for ever and the browser may keep it a year without asking
again; a request without the matching version (an old page, a hand-typed URL) is cached
briefly and revalidated with its ETag. No package is needed for this (no whitenoise).
"""
from __future__ import annotations

import gzip
import hashlib
import mimetypes
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from django.contrib.staticfiles import finders
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.contrib.staticfiles.storage import StaticFilesStorage
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.cache import get_conditional_response
from django.utils.http import http_date

# Text compresses 3-6 times; images other than SVG are compressed already.
COMPRESSIBLE = ("text/", "application/javascript", "application/json", "image/svg+xml")
# Below this the gzip header and a round of inflating cost more than they save.
MIN_COMPRESS_BYTES = 512
LONG_MAX_AGE_S = 365 * 24 * 3600
SHORT_MAX_AGE_S = 3600
_GZIP = re.compile(r"\bgzip\b(?!\s*;\s*q=0(\.0*)?\s*(,|$))")


@dataclass(frozen=True)
class Asset:
    body: bytes
    gzipped: bytes | None
    content_type: str
    version: str
    mtime: float


def _content_type(path: Path) -> str:
    guessed, _ = mimetypes.guess_type(path.name)
    kind = guessed or "application/octet-stream"
    if kind in ("text/javascript", "application/javascript"):
        kind = "text/javascript"
    return f"{kind}; charset=utf-8" if kind.startswith("text/") else kind


@lru_cache(maxsize=256)
def _load(path: str, mtime_ns: int, size: int) -> Asset:
    body = Path(path).read_bytes()
    kind = _content_type(Path(path))
    gzipped = None
    if len(body) >= MIN_COMPRESS_BYTES and kind.startswith(COMPRESSIBLE):
        packed = gzip.compress(body, compresslevel=9, mtime=0)
        gzipped = packed if len(packed) < len(body) else None
    return Asset(body, gzipped, kind, hashlib.sha256(body).hexdigest()[:12], mtime_ns / 1e9)


def asset_at(path: Path | str) -> Asset:
    """The file's content, compressed and hashed; read again only once it changes."""
    stat = os.stat(path)
    return _load(str(path), stat.st_mtime_ns, stat.st_size)


def accepts_gzip(request: HttpRequest) -> bool:
    return bool(_GZIP.search(request.headers.get("Accept-Encoding", "").lower()))


def asset_response(request: HttpRequest, asset: Asset, *, immutable: bool) -> HttpResponse:
    """200 with the (compressed where accepted) body, or 304 when the browser's copy is
    current. The ETag differs per encoding: the two bodies are different bytes."""
    packed = asset.gzipped is not None and accepts_gzip(request)
    etag = f'"{asset.version}{"-gz" if packed else ""}"'
    not_modified = get_conditional_response(request, etag=etag, last_modified=int(asset.mtime))
    response = not_modified or HttpResponse(asset.gzipped if packed else asset.body,
                                            content_type=asset.content_type)
    response["ETag"] = etag
    response["Last-Modified"] = http_date(asset.mtime)
    if packed and not_modified is None:
        response["Content-Encoding"] = "gzip"
    if asset.gzipped is not None:
        response["Vary"] = "Accept-Encoding"
    response["Cache-Control"] = (f"public, max-age={LONG_MAX_AGE_S}, immutable" if immutable
                                 else f"public, max-age={SHORT_MAX_AGE_S}")
    return response


def static_response(request: HttpRequest, name: str) -> HttpResponse:
    """The static file ``name`` (relative to STATIC_URL), found as ``{% static %}`` finds it."""
    found = finders.find(name.lstrip("/")) if ".." not in Path(name).parts else None
    if not found or not os.path.isfile(found):
        raise Http404(f"no static file {name!r}")
    asset = asset_at(found)
    return asset_response(request, asset, immutable=request.GET.get("v") == asset.version)


class CompressedStaticFilesHandler(ASGIStaticFilesHandler):
    """Django's ASGI static handler, serving through ``static_response``."""

    def serve(self, request: HttpRequest) -> HttpResponse:  # type: ignore[override]
        return static_response(request, self.file_path(request.path))


class VersionedStaticStorage(StaticFilesStorage):
    """``{% static 'css/app.css' %}`` -> ``/static/css/app.css?v=<hash>``: the URL changes
    when the file does, so the long cache above never serves a stale file."""

    def url(self, name: str | None) -> str:
        base = super().url(name)
        found = finders.find(name) if name else None
        if not found or not os.path.isfile(found):
            return base
        return f"{base}?v={asset_at(found).version}"
