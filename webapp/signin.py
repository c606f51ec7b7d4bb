"""What a locked-out sign-in gets (django-axes calls this): JSON on the API, the page elsewhere."""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

TOO_MANY_REQUESTS = 429


def lockout_message() -> str:
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return (f"Too many failed sign-ins ({settings.AXES_FAILURE_LIMIT}) for this user from "
            f"this address: try again in {minutes} minutes.")


def lockout_response(request: HttpRequest, original_response: HttpResponse | None = None,
                     credentials: dict | None = None) -> HttpResponse:
    if request.path.startswith("/api/"):
        return JsonResponse({"error": lockout_message(),
                             "details": {"failure_limit": settings.AXES_FAILURE_LIMIT}},
                            status=TOO_MANY_REQUESTS)
    return render(request, "registration/login.html",
                  {"form": AuthenticationForm(request), "lockout": lockout_message(),
                   "next": request.POST.get("next", "")},
                  status=TOO_MANY_REQUESTS)
