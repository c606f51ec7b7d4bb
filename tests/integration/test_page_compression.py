"""Issue 35.7 (b): pages and JSON answers come gzip-compressed to a client that accepts it,
plain to one that does not, and a streaming answer is never held back."""
from __future__ import annotations

import gzip
import re

from django.http import HttpResponse, StreamingHttpResponse
from django.test import RequestFactory
from django.urls import reverse

from cluster.models import Spu
from webapp.middleware import CompressResponses

# Django masks the CSRF token afresh in every answer: two fetches of a page differ there only.
CSRF = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]+"')


def _spus(count: int) -> None:
    Spu.objects.bulk_create(Spu(id=i, rack=f"rack-{i % 3}", public_endpoint=f"spu-{i}:9005")
                            for i in range(count))


def test_a_page_comes_gzipped_and_decodes_to_the_same_page(viewer_client):
    _spus(40)
    zipped = viewer_client.get(reverse("cluster:spus"), HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    plain = viewer_client.get(reverse("cluster:spus"))
    assert zipped.status_code == plain.status_code == 200
    assert zipped["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in zipped["Vary"]
    page = gzip.decompress(zipped.content)
    assert len(zipped.content) < len(page) / 3
    assert b'data-spu="39"' in page
    assert CSRF.sub(b"", page) == CSRF.sub(b"", plain.content)


def test_a_client_without_gzip_gets_the_plain_page(viewer_client):
    _spus(40)
    plain = viewer_client.get(reverse("cluster:spus"))
    assert not plain.has_header("Content-Encoding")
    assert "Accept-Encoding" in plain["Vary"]  # a cache keeps the two apart
    assert b'data-spu="39"' in plain.content
    refused = viewer_client.get(reverse("cluster:spus"), HTTP_ACCEPT_ENCODING="gzip;q=0")
    assert not refused.has_header("Content-Encoding")
    assert b'data-spu="39"' in refused.content


def test_json_answers_come_gzipped_too(viewer_client):
    _spus(40)
    zipped = viewer_client.get("/api/spus/", HTTP_ACCEPT_ENCODING="gzip")
    plain = viewer_client.get("/api/spus/")
    assert zipped["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.content) == plain.content
    assert len(plain.json()["results"]) == 40


def test_a_streaming_answer_is_passed_on_chunk_by_chunk(db):
    pulled: list[str] = []

    def stream():
        for chunk in ("event: a\n\n", "event: b\n\n"):
            pulled.append(chunk)
            yield chunk.encode() * 50  # past the size gzip would compress

    request = RequestFactory().get("/live", HTTP_ACCEPT_ENCODING="gzip")
    middleware = CompressResponses(lambda r: StreamingHttpResponse(
        stream(), content_type="text/event-stream"))
    response = middleware(request)
    assert not response.has_header("Content-Encoding")
    chunks = iter(response.streaming_content)
    assert next(chunks) == b"event: a\n\n" * 50
    assert pulled == ["event: a\n\n"]  # the first chunk left before the second was made


def test_a_small_answer_is_left_as_it_is(db):
    request = RequestFactory().get("/healthz", HTTP_ACCEPT_ENCODING="gzip")
    response = CompressResponses(lambda r: HttpResponse(b"ok"))(request)
    assert response.content == b"ok" and not response.has_header("Content-Encoding")
