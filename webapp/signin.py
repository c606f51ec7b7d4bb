"""Sign-in: the username bounded before django-axes sees it, and what a locked-out sign-in gets
(django-axes calls this): JSON on the API, the page elsewhere."""
from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

TOO_MANY_REQUESTS = 429


def username_max_length() -> int:
    return get_user_model()._meta.get_field("username").max_length


class _BoundedUsername:
    """Django's sign-in form sets the username's max_length after the field is built, so
    nothing checks it: a longer name reached django-axes, whose varchar(255) made
    PostgreSQL raise (a 500). Checked here, the form answers before any sign-in attempt."""

    cleaned_data: dict[str, Any]

    def clean_username(self) -> str:
        username = self.cleaned_data["username"]
        limit = username_max_length()
        if len(username) > limit:
            raise forms.ValidationError(f"A username is at most {limit} characters.")
        return username


class SignInForm(_BoundedUsername, AuthenticationForm):
    pass


class AdminSignInForm(_BoundedUsername, AdminAuthenticationForm):
    pass


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
