"""Request gates before any view (NUL bytes in paths and query strings, the reader role),
and the compression of what the views answer.

PostgreSQL text cannot hold NUL, so a filter like ?operation=%00 or a path like
/api/topics/a%00b/ would end as a server error there (SQLite accepts it); bad
input gets a 400 instead, before any URL pattern or view sees it.
"""
from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.http.response import HttpResponseBase
from django.middleware.gzip import GZipMiddleware
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from cluster.roles import NO_ROLE, can_read
from webapp.static_serving import accepts_gzip

NUL = "\x00"


class BindStore:
    """Every request binds its store for its run (cluster/adapters/redis_keys.py: a key made
    outside a binding is an error): pages, the API, the stall banner and the scrape read the
    engine's store id at their first key, once, and a request that makes none reads none."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from cluster.ports import engine  # the apps are ready only once requests come

        with engine().serving():
            return self.get_response(request)


class RejectNulBytes:
    """One gate for every route: no path converter or view has to remember NUL."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if NUL in request.path_info:
            return _refused(request, "the path contains a NUL byte", None)
        bad = next((key for key, values in request.GET.lists()
                    if NUL in key or any(NUL in v for v in values)), None)
        if bad is None:
            return self.get_response(request)
        return _refused(request, f"query parameter {bad.replace(NUL, '')!r} contains a NUL byte",
                        {"parameter": bad})


def _refused(request: HttpRequest, message: str, details: dict[str, str] | None) -> HttpResponse:
    if request.path.startswith("/api/"):
        return JsonResponse({"error": message, "details": details}, status=400)
    return HttpResponseBadRequest(message)


# Signing in and out, the admin (its own staff rule) and assets stay reachable; the
# API checks the role in its permission class so its refusals stay JSON.
NO_ROLE_NEEDED = ("/login/", "/logout/", "/admin/", "/static/", "/api/", "/favicon.ico")


class RequireReaderRole:
    """A signed-in user in neither the viewers nor the operators group reads nothing."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if (user is None or not user.is_authenticated or request.path.startswith(NO_ROLE_NEEDED)
                or can_read(user)):
            return self.get_response(request)
        return render(request, "403.html", {"reason": NO_ROLE}, status=403)


class CompressResponses(GZipMiddleware):
    """Pages and JSON gzip-compressed for a client that accepts it (issue 35.7: the
    partition and plan pages are hundreds of KB of HTML; static files are compressed by
    webapp/static_serving.py before any middleware).

    BREACH (a secret in a compressed page guessed from the sizes of many answers that also
    reflect the attacker's input): the secret such pages carry is the CSRF token, and
    Django masks it afresh in every response, so no two answers hold the same bytes of it;
    Django's GZipMiddleware also pads each answer with up to 100 random bytes (Heal The
    Breach), which blurs the sizes. No page shows an API token; only the answer to a POST
    that carries the password does, which no other site can make a browser send.

    Unlike Django's, it honours ``gzip;q=0`` and leaves streaming responses alone: gzip
    would hold a stream's chunks back until enough bytes gather (no flush per chunk), and
    a live answer must reach the client as it is written.
    """

    def process_response(self, request: HttpRequest,
                         response: HttpResponseBase) -> HttpResponseBase:
        if response.streaming:
            return response
        if accepts_gzip(request):
            return super().process_response(request, response)
        patch_vary_headers(response, ("Accept-Encoding",))
        return response
