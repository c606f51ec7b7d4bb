"""plotly.js from the installed plotly package (no CDN, no build step), and the favicon."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import plotly
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import condition

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
FAVICON = Path(__file__).resolve().parents[2] / "static" / "img" / "favicon.svg"


@lru_cache(maxsize=1)
def _plotly_js() -> bytes:
    return PLOTLY_JS.read_bytes()


def _etag(request: HttpRequest) -> str:
    return f"plotly-{plotly.__version__}"


# Public like any static file: it is the library, not cluster data.
@login_not_required
@cache_control(public=True, max_age=7 * 24 * 3600)
@condition(etag_func=_etag)
def plotly_js(request: HttpRequest) -> HttpResponse:
    return HttpResponse(_plotly_js(), content_type="text/javascript; charset=utf-8")


@lru_cache(maxsize=1)
def _favicon() -> bytes:
    return FAVICON.read_bytes()


# Browsers ask /favicon.ico before reading the page's <link rel="icon">: answer it too
# (an SVG; every current browser reads it whatever the path says).
@login_not_required
@cache_control(public=True, max_age=7 * 24 * 3600)
def favicon(request: HttpRequest) -> HttpResponse:
    return HttpResponse(_favicon(), content_type="image/svg+xml")
