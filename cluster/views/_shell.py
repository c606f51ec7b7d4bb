"""What every page shares: the operator gate, and domain errors in one place."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import wraps
from typing import Any, TypeVar

from django import forms
from django.contrib import messages
from django.core.paginator import Page, Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from cluster.errors import DomainError
from cluster.forms import add_domain_error
from cluster.roles import is_operator

View = TypeVar("View", bound=Callable[..., HttpResponse])


def operator_required(view: View) -> View:
    """Viewers read; only operators change the cluster (cluster/roles.py)."""
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_operator(request.user):
            # Rendered, not raised: a viewer's visit is expected, not an error whose
            # traceback belongs in the log (Django logs the 403 line either way).
            return render(request, "403.html", status=403)
        return view(request, *args, **kwargs)
    return wrapper  # type: ignore[return-value]


@dataclass
class Outcome:
    """A service call's result, or the refusal shown on the form."""
    value: Any = None
    error: DomainError | None = None
    problems: list[dict[str, object]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


def call_service(form: forms.Form, service: Callable[..., Any], **kwargs: Any) -> Outcome:
    """Run a service; a DomainError becomes a form error (the one place pages do it)."""
    try:
        return Outcome(value=service(**kwargs))
    except DomainError as exc:
        add_domain_error(form, exc)
        return Outcome(error=exc, problems=problem_rows(exc))


def call_action(request: HttpRequest, service: Callable[..., Any], done: str,
                **kwargs: Any) -> str | None:
    """A POST with no fields (delete, unregister): flash ``done``, or return the refusal."""
    form = forms.Form(request.POST)
    if call_service(form, service, by=request.user, **kwargs).ok:
        messages.success(request, done)
        return None
    return " ".join(form.non_field_errors())


def problem_rows(error: DomainError) -> list[dict[str, object]]:
    """Itemised replica-map problems (partition, rule, message) when the service gave them."""
    details = error.details
    if isinstance(details, list) and all(isinstance(d, dict) and "rule" in d for d in details):
        return details
    return []


def paginate(request: HttpRequest, items: Any, per_page: int) -> Page:
    return Paginator(items, per_page).get_page(request.GET.get("page"))


def query_without_page(request: HttpRequest) -> str:
    """The current filters as a query string, for pagination links."""
    params = request.GET.copy()
    params.pop("page", None)
    return params.urlencode()


def back(request: HttpRequest) -> HttpResponse:
    """To the page the action came from (its ``next``), or the SPU page; never off-site."""
    target = request.POST.get("next", "") or request.GET.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        target = reverse("cluster:spus")
    return redirect(target)
