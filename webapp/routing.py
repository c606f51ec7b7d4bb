"""WebSocket routes; each app appends its own consumers here, before the catch-all."""
from __future__ import annotations

from django.urls import path, re_path

from cluster.consumers import LiveConsumer, UnknownPath
from planner.consumers import JobConsumer

websocket_urlpatterns: list = [
    path("ws/cluster/", LiveConsumer.as_asgi()),
    path("ws/topics/<str:name>/", LiveConsumer.as_asgi()),
    re_path(r"^ws/(?P<kind>plan|grid)s/(?P<pk>[0-9]+)/$", JobConsumer.as_asgi()),
    # URLRouter raises on an unmatched path, which servers answer with HTTP 500.
    re_path(r"", UnknownPath.as_asgi()),
]
