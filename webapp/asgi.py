"""ASGI entry: Django for HTTP, Channels for WebSockets."""
from __future__ import annotations

import os

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
# The app serves its own static files: `make run` needs no separate web server.
django_asgi = ASGIStaticFilesHandler(get_asgi_application())

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs apps ready)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from webapp.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter({
    "http": django_asgi,
    "websocket": AllowedHostsOriginValidator(
        AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
})
