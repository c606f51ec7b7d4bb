"""Refuse NUL bytes in query strings before any view filters the store with them.

PostgreSQL text cannot hold NUL, so a filter like ?operation=%00 would end as a
server error there (SQLite accepts it); bad input gets a 400 instead.
"""
from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

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
