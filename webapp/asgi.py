"""ASGI entry: Django for HTTP, Channels for WebSockets."""
from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
from webapp.static_serving import CompressedStaticFilesHandler  # noqa: E402

# The app serves its own static files, compressed and cached (webapp/static_serving.py):
# `make run` needs no separate web server.
django_asgi = CompressedStaticFilesHandler(get_asgi_application())

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs apps ready)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from webapp.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter({
    "http": django_asgi,
    "websocket": AllowedHostsOriginValidator(
        AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
})

from cluster.perf import freeze_loaded  # noqa: E402

# The loaded server out of the cyclic GC's full collections (a p99 of 100-300 ms, issue 33).
freeze_loaded()
