"""Pages: thin shells over selectors and services."""
from __future__ import annotations

from collections import Counter

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from cluster.models import Event, Topic
from cluster.selectors import spus_by_rack


def overview(request: HttpRequest) -> HttpResponse:
    topics = list(Topic.objects.order_by("name"))
    return render(request, "cluster/overview.html", {
        "racks": spus_by_rack(),
        "topics": topics,
        "resolutions": Counter(t.resolution for t in topics),
        "events": Event.objects.all()[:15],
    })
