"""Domain errors: every shell turns these into its own refusal in one place.

A page shows ``message`` next to ``field``; the API answers ``status`` with
``{"error": message, "details": details}``; a command exits 2 with message,
or 1 for ``Unavailable`` (the input was fine, the cluster cannot serve it now).
"""
from __future__ import annotations


class DomainError(Exception):
    status = 400

    def __init__(self, message: str, *, field: str | None = None,
                 details: object = None):
        super().__init__(message)
        self.message = message
        self.field = field
        self.details = details

    def as_json(self) -> dict[str, object]:
        return {"error": self.message, "details": self.details,
                **({"field": self.field} if self.field else {})}


class InvalidInput(DomainError):
    status = 400


class NotFound(DomainError):
    status = 404


class Conflict(DomainError):
    status = 409


class Unavailable(Conflict):
    """Good input the cluster cannot serve right now (no leader, not replicated yet)."""
