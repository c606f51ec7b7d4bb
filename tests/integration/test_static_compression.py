"""Issue 35.7 (a): the 4.8 MB plotly bundle and the app's own static files are served
gzip-compressed to clients that accept it, and with cache headers."""
from __future__ import annotations

import gzip

from django.template import Context, Template
from django.test import RequestFactory
from django.urls import reverse

from cluster.views.assets import PLOTLY_JS, PLOTLY_VERSION
from webapp.static_serving import CompressedStaticFilesHandler

STATIC_APP_CSS = "/static/css/app.css"


def _max_age(response) -> int:
    parts = dict(p.strip().partition("=")[::2] for p in response["Cache-Control"].split(","))
    return int(parts["max-age"])


def test_the_plotly_bundle_comes_gzipped_and_cached_for_good(client, db):
    url = reverse("cluster:plotly-js")
    response = client.get(url, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in response["Vary"]
    raw = PLOTLY_JS.read_bytes()
    assert len(response.content) < len(raw) / 3
    assert gzip.decompress(response.content) == raw
    assert _max_age(response) >= 30 * 24 * 3600
    assert "immutable" in response["Cache-Control"]


def test_a_client_without_gzip_gets_the_plain_bundle(client, db):
    response = client.get(reverse("cluster:plotly-js"))
    assert response.status_code == 200
    assert not response.has_header("Content-Encoding")
    assert response.content == PLOTLY_JS.read_bytes()
    refused = client.get(reverse("cluster:plotly-js"), HTTP_ACCEPT_ENCODING="gzip;q=0")
    assert not refused.has_header("Content-Encoding")


def test_the_bundle_is_not_sent_again_to_a_browser_that_holds_it(client, db):
    first = client.get(reverse("cluster:plotly-js"), HTTP_ACCEPT_ENCODING="gzip")
    again = client.get(reverse("cluster:plotly-js"), HTTP_ACCEPT_ENCODING="gzip",
                       HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304
    assert again.content == b""


def test_pages_link_the_versioned_bundle_and_the_old_url_still_answers(client, db):
    assert PLOTLY_VERSION in reverse("cluster:plotly-js")
    old = client.get("/assets/plotly.min.js", HTTP_ACCEPT_ENCODING="gzip")
    assert old.status_code == 200 and old["Content-Encoding"] == "gzip"
    assert "immutable" not in old["Cache-Control"]


def _static(path: str, **headers):
    handler = CompressedStaticFilesHandler(lambda *a: None)  # the app is never reached
    return handler.get_response(RequestFactory().get(path, **headers))


def test_static_files_come_gzipped_with_a_cache_header(db):
    response = _static(STATIC_APP_CSS, HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    assert response["Content-Type"].startswith("text/css")
    assert b"{" in gzip.decompress(response.content)
    assert _max_age(response) > 0


def test_static_urls_carry_the_content_version_that_earns_a_year_of_cache(db):
    url = Template("{% load static %}{% static 'css/app.css' %}").render(Context())
    assert url.startswith(STATIC_APP_CSS + "?v=")
    path, _, query = url.partition("?")
    response = _static(url, HTTP_ACCEPT_ENCODING="gzip")
    assert response["Content-Encoding"] == "gzip"
    assert _max_age(response) == 365 * 24 * 3600 and "immutable" in response["Cache-Control"]
    stale = _static(path + "?v=000000000000")
    assert "immutable" not in stale["Cache-Control"]


def test_a_missing_or_escaping_static_path_is_a_404(db):
    assert _static("/static/css/none.css").status_code == 404
    assert _static("/static/../webapp/settings.py").status_code == 404
