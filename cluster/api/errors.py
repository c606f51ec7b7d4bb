"""The one place an API refusal gets its body: ``{"error", "details"}``, said in words.

Every API view mixes in ``JsonErrors`` (through ``ApiView`` in cluster/api/views.py):
a DomainError keeps its status, Django's and DRF's refusals get a sentence for people.
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import (RequestDataTooBig, SuspiciousOperation, TooManyFieldsSent,
                                    TooManyFilesSent)
from rest_framework import status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.response import Response

from cluster.adapters.redis_keys import REDIS_DOWN, unreachable_reason
from cluster.errors import DomainError


class JsonErrors:
    """The one place an API refusal gets its body: ``{"error", "details"}``."""

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, DomainError):
            return Response(exc.as_json(), status=exc.status)
        if isinstance(exc, (RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent)):
            return _too_big(exc)
        if isinstance(exc, SuspiciousOperation):
            # Django would answer its HTML "Bad Request (400)"; an API client reads JSON.
            return Response({"error": f"request refused: {exc}", "details": None},
                            status=status.HTTP_400_BAD_REQUEST)
        if isinstance(exc, (TimeoutError, *REDIS_DOWN)):
            # The hot-state lease stayed busy or was lost, or Redis is down: retry later.
            error = unreachable_reason(exc) if isinstance(exc, REDIS_DOWN) else str(exc)
            return Response({"error": error, "details": {"retry": True}},
                            status=status.HTTP_503_SERVICE_UNAVAILABLE)
        response = super().handle_exception(exc)  # type: ignore[misc]
        response.data = _error_body(exc, response.data)
        return response


def _first_problem(data: Any, path: str = "") -> str:
    """``values.0: Ensure ...``: the first field problem in words, for people."""
    if isinstance(data, dict) and data:
        key, inner = next(iter(data.items()))
        return _first_problem(inner, f"{path}.{key}" if path else str(key))
    if isinstance(data, list) and data:
        return _first_problem(next((d for d in data if d), data[0]), path)
    return f"{path}: {data}" if path else str(data)


def _too_big(exc: Exception) -> Response:
    """Django names its setting (DATA_UPLOAD_MAX_MEMORY_SIZE); a client needs the limit."""
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return Response({"error": f"the request body is too large: this server reads at most "
                                  f"{limit / 2**20:g} MiB ({limit} bytes)",
                         "details": {"limit_bytes": limit}},
                        status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    return Response({"error": "the form has more fields or files than this server reads",
                     "details": None}, status=status.HTTP_400_BAD_REQUEST)


def _error_body(exc: Exception, data: Any) -> dict[str, Any]:
    if isinstance(exc, ValidationError):
        return {"error": f"invalid input: {_first_problem(data)}", "details": data}
    if isinstance(exc, APIException) and isinstance(data, dict) and "detail" in data:
        return {"error": str(data["detail"]), "details": None}
    return {"error": "request refused", "details": data}
