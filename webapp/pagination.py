"""API pagination with a bounded page, so no client can ask the store for 10**26 rows."""
from __future__ import annotations

from rest_framework.pagination import LimitOffsetPagination


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    default_limit = 100
    max_limit = 1000
