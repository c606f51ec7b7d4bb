"""WebSocket routes; each app appends its own consumers here."""
from __future__ import annotations

websocket_urlpatterns: list = []
