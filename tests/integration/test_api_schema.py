"""The OpenAPI schema matches what the endpoints do.

A small stand-in for schemathesis: each sample call's status must be
documented for its operation, and its JSON body must validate against the
documented schema (OpenAPI 3.0's ``nullable`` turned into JSON Schema).
"""
from __future__ import annotations

import json
import re

import jsonschema
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from tests.helpers import register_spus


@pytest.fixture
def schema(api) -> dict:
    response = api.get("/api/schema/?format=json")
    assert response.status_code == 200
    return json.loads(response.content)


def _json_schema(node: object) -> object:
    if isinstance(node, list):
        return [_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema(v) for k, v in node.items() if k != "nullable"}
    if node.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out


def _operation(schema: dict, method: str, path: str) -> dict:
    for template, item in schema["paths"].items():
        pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
        if re.match(pattern, path.split("?")[0]) and method in item:
            return item[method]
    raise AssertionError(f"{method.upper()} {path} is not in the schema")


def check(schema: dict, response, method: str, path: str) -> None:
    operation = _operation(schema, method, path)
    documented = operation["responses"]
    status = str(response.status_code)
    assert status in documented, f"{method} {path} answered {status}, documents {list(documented)}"
    content = documented[status].get("content")
    if response.status_code == 204 or not content:
        return
    body_schema = _json_schema(next(iter(content.values()))["schema"])
    root = {**body_schema, "components": _json_schema(schema["components"])}
    jsonschema.validate(response.json(), root)


def test_the_schema_covers_every_api_route(schema):
    from cluster.api.urls import urlpatterns
    documented = set(schema["paths"])
    for pattern in urlpatterns:
        route = "/api/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
        if route in ("/api/schema/", "/api/docs/"):
            continue
        assert route in documented, route


def test_sample_calls_answer_what_the_schema_documents(api, schema, viewer):
    register_spus(0, 1, 2, rack="", online=True)
    calls = [
        ("post", "/api/spus/", {"id": 5}), ("post", "/api/spus/", {"id": 5}),
        ("post", "/api/spus/", {"id": "x"}), ("get", "/api/spus/", None),
        ("get", "/api/spus/5/", None), ("get", "/api/spus/99/", None),
        ("delete", "/api/spus/5/", None), ("delete", "/api/spus/5/", None),
        ("post", "/api/spu-groups/", {"name": "g", "replicas": 2, "min_id": 10}),
        ("post", "/api/spu-groups/", {"name": "G!", "replicas": 2}),
        ("get", "/api/spu-groups/", None), ("get", "/api/spu-groups/g/", None),
        ("patch", "/api/spu-groups/g/", {"replicas": 1}),
        ("delete", "/api/spu-groups/g/", None),
        ("post", "/api/topics/", {"name": "t", "partition_count": 3, "replication": 2}),
        ("post", "/api/topics/", {"name": "d", "partition_count": 3, "replication": 2,
                                  "dry_run": True}),
        ("post", "/api/topics/", {"name": "t", "partition_count": 3, "replication": 2}),
        ("post", "/api/topics/", {"name": "m", "replica_assignment": {"partitions": [
            {"id": 0, "replicas": [0]}]}}),
        ("post", "/api/topics/", {"name": "n", "replica_assignment": [{"id": 3, "replicas": []}]}),
        ("get", "/api/topics/", None), ("get", "/api/topics/t/", None),
        ("get", "/api/topics/zz/", None), ("get", "/api/partitions/?topic=t", None),
        ("get", "/api/events/", None), ("get", "/api/cluster/", None),
        ("delete", "/api/topics/t/", None),
    ]
    for method, path, body in calls:
        response = getattr(api, method)(path, body, format="json")
        check(schema, response, method, path)
    upload = SimpleUploadedFile("f.json", b'[{"id": 0, "replicas": [1]}]')
    check(schema, api.post("/api/topics/", {"name": "u", "file": upload}, format="multipart"),
          "post", "/api/topics/")
    refused = APIClient()
    refused.force_authenticate(viewer)
    check(schema, refused.post("/api/topics/", {"name": "v"}, format="json"), "post", "/api/topics/")


def test_the_docs_page_uses_the_sidecar_not_a_cdn(operator_client):
    html = operator_client.get("/api/docs/").content.decode()
    # Asked of the page's URLs, not its whole text: its random CSRF token may spell "cdn".
    urls = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert "swagger-ui" in html and urls
    assert all(u.startswith("/") and "cdn" not in u.lower() for u in urls), urls
    assert "/static/drf_spectacular_sidecar/" in html
