"""plotly.js from the installed plotly package (no CDN, no build step), and the favicon.

The bundle is 4.8 MB: it is served gzip-compressed where the browser accepts it, and its
URL names plotly's version, so the browser keeps it a year (webapp/static_serving.py)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import plotly
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import cache_control

from webapp.static_serving import asset_at, asset_response

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
FAVICON = Path(__file__).resolve().parents[2] / "static" / "img" / "favicon.svg"


PLOTLY_VERSION = plotly.__version__


# Public like any static file: it is the library, not cluster data. Pages link the
# versioned URL (cached for good); the unversioned one stays for old links, cached briefly.
@login_not_required
def plotly_js(request: HttpRequest, versioned: bool = True) -> HttpResponse:
    return asset_response(request, asset_at(PLOTLY_JS), immutable=versioned)


@lru_cache(maxsize=1)
def _favicon() -> bytes:
    return FAVICON.read_bytes()


# Browsers ask /favicon.ico before reading the page's <link rel="icon">: answer it too
# (an SVG; every current browser reads it whatever the path says).
@login_not_required
@cache_control(public=True, max_age=7 * 24 * 3600)
def favicon(request: HttpRequest) -> HttpResponse:
    return HttpResponse(_favicon(), content_type="image/svg+xml")
