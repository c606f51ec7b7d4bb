"""WebSocket routes; each app appends its own consumers here."""
from __future__ import annotations

from django.urls import path

from cluster.consumers import LiveConsumer

websocket_urlpatterns: list = [
    path("ws/cluster/", LiveConsumer.as_asgi()),
    path("ws/topics/<str:name>/", LiveConsumer.as_asgi()),
]
