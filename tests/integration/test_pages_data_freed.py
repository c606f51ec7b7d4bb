"""A page's data is freed by reference counting once it is rendered, not left to the
cyclic GC (issue 33, webapp/template_backend.py).

Django's RequestContext and the ContextDict holding the view's dict point at each other,
so every page's rows and stats waited for a collection, whose pause then fell on a later
request's p99 while the engine stepped.
"""
from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
from django.template import engines
from django.test import RequestFactory

from cluster.views import spus as spus_view
from tests.helpers import register_spus


class Held:
    """Something a view hands its template, to watch for its release."""
    name = "held"


@pytest.fixture
def refcount_only() -> Iterator[None]:
    was = gc.isenabled()
    gc.collect()
    gc.disable()  # only reference counting may free what the test watches
    try:
        yield
    finally:
        if was:
            gc.enable()


def test_a_rendered_context_is_freed_by_reference_counting(db, refcount_only):
    template = engines["django"].from_string("{{ held.name }} {% with x=held %}{{ x.name }}"
                                             "{% endwith %}")
    held = Held()
    freed = weakref.ref(held)
    assert template.render({"held": held}, RequestFactory().get("/")) == "held held"
    del held
    assert freed() is None, "the page's context is held in a cycle until a collection"


def test_the_spus_page_frees_its_rows(operator_client, redis_url, monkeypatch,
                                       refcount_only):
    register_spus(0, 1, 2, rack="r1")
    made = []

    def cluster_stats():
        stats = real()
        made.append(weakref.ref(stats.spus[2]))  # in the page's rows
        return stats

    real = spus_view.cluster_stats
    monkeypatch.setattr(spus_view, "cluster_stats", cluster_stats)
    response = operator_client.get("/spus/")
    assert response.status_code == 200 and b'data-spu="2"' in response.content
    # The test client keeps copies of the context and ties the response to itself (json).
    assert response.context["total"] == 3
    response.__dict__.pop("json", None)
    del response
    assert made and made[0]() is None, "the page's rows are held in a cycle"
