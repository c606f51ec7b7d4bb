"""A NUL byte in any path parameter is a 400, on SQLite and on PostgreSQL alike.

PostgreSQL text cannot hold NUL: a lookup by such a name raised psycopg's DataError
(a 500) where SQLite answered 404. One gate (webapp.middleware.RejectNulBytes)
answers every route, so the sweep walks every URL pattern with a parameter.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.urls import URLPattern, URLResolver, get_resolver, reverse

ROOT = Path(__file__).resolve().parents[2]
NUL_NAME = "a\x00b"
# PostgreSQL of the machine (trust auth on 127.0.0.1); TEST_POSTGRES_URL names another.
POSTGRES = os.environ.get("TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def _routes(resolver: URLResolver, namespace: str = "") -> list[str]:
    """Every named route taking a parameter, filled with a NUL name (ints with 1)."""
    urls = []
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            urls += _routes(entry, inner)
        elif isinstance(entry, URLPattern) and entry.name and entry.pattern.converters:
            kwargs = {key: 1 if type(conv).__name__ == "IntConverter" else NUL_NAME
                      for key, conv in entry.pattern.converters.items()}
            if NUL_NAME in kwargs.values():
                urls.append(reverse(f"{namespace}{entry.name}", kwargs=kwargs))
    return urls


ROUTES = sorted(set(_routes(get_resolver())))
# The ones the issue saw answer 500 on PostgreSQL, so the sweep cannot silently shrink.
SEEN = {"/api/topics/a%00b/", "/api/topics/a%00b/records/", "/api/topics/a%00b/produce/",
        "/api/spu-groups/a%00b/", "/api/tokens/a%00b/", "/api/racks/a%00b/offline/",
        "/topics/a%00b/"}


def test_the_sweep_covers_every_path_the_issue_saw_fail():
    assert SEEN <= set(ROUTES)


def test_a_nul_in_any_path_parameter_is_refused_with_400(operator_client):
    # One test, not one per route: each test's operator costs a password hash.
    answers = {(method, url): getattr(operator_client, method)(url)
               for url in ROUTES for method in ("get", "post", "delete")}
    wrong = {key: r.status_code for key, r in answers.items()
             if r.status_code != 400 or b"NUL byte" not in r.content}
    assert wrong == {}


def test_the_api_says_it_in_json_and_pages_in_text(operator_client):
    assert operator_client.delete("/api/topics/a%00b/").json() == {
        "error": "the path contains a NUL byte", "details": None}
    assert operator_client.get("/topics/a%00b/").content == b"the path contains a NUL byte"


def test_an_anonymous_visitor_gets_the_same_400_not_a_redirect(client):
    assert client.get("/topics/a%00b/").status_code == 400


def test_every_path_answers_400_on_postgresql_too(tmp_path):
    """The sweep again, in a pytest of its own whose store is PostgreSQL."""
    base = POSTGRES.rsplit("/", 1)[0]
    env = {**os.environ, "DATABASE_URL": f"{base}/nul_paths_{os.getpid()}",
           "VAR_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-x", "--nomigrations",
         __file__, "-k", "not postgresql", "-W", "ignore::RuntimeWarning"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "4 passed" in done.stdout
