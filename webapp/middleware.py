"""Request gates before any view: NUL bytes in query strings, and the reader role.

PostgreSQL text cannot hold NUL, so a filter like ?operation=%00 would end as a
server error there (SQLite accepts it); bad input gets a 400 instead.
"""
from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import render

from cluster.roles import NO_ROLE, can_read

NUL = "\x00"


class RejectNulBytes:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        bad = next((key for key, values in request.GET.lists()
                    if NUL in key or any(NUL in v for v in values)), None)
        if bad is None:
            return self.get_response(request)
        message = f"query parameter {bad.replace(NUL, '')!r} contains a NUL byte"
        if request.path.startswith("/api/"):
            return JsonResponse({"error": message, "details": {"parameter": bad}}, status=400)
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
