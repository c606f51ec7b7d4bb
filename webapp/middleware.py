"""Request gates before any view: NUL bytes in paths and query strings, and the reader role.

PostgreSQL text cannot hold NUL, so a filter like ?operation=%00 or a path like
/api/topics/a%00b/ would end as a server error there (SQLite accepts it); bad
input gets a 400 instead, before any URL pattern or view sees it.
"""
from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import render

from cluster.roles import NO_ROLE, can_read

NUL = "\x00"


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
