"""Reading the metadata log: what `metadata dump`, `metadata tail` and /api/metadata/ show."""
from __future__ import annotations

from typing import Any, TypedDict

from cluster.adapters import metadata_log
from cluster.engine.engine import current as engine
from cluster.errors import InvalidInput
from cluster.projections import store as store_projection

MAX_PAGE = 5000


class MetadataPage(TypedDict):
    entries: list[dict[str, Any]]
    start: int      # the first offset the log still holds
    head: int       # the last offset written
    applied: int    # the last offset the store's projection applied
    next: int       # where the next page starts


MAX_OFFSET_DIGITS = 18  # a log offset fits in a signed 64-bit integer


def parse_offset(value: object, name: str = "from") -> int:
    """A non-negative integer offset, or InvalidInput naming the problem."""
    text = str(value).strip()
    if not text.isdigit():
        raise InvalidInput(f"{name} must be a whole number of at least 0 (an offset), "
                           f"not {str(value)[:40]!r}", field=name)
    if len(text) > MAX_OFFSET_DIGITS:
        raise InvalidInput(f"{name} is too large: an offset has at most {MAX_OFFSET_DIGITS} "
                           f"digits (the log's head is far below)", field=name)
    return int(text)


def parse_limit(value: object) -> int:
    text = str(value).strip()
    if not text.isdigit() or len(text) > 6 or not 1 <= int(text) <= MAX_PAGE:
        raise InvalidInput(f"limit must be a whole number from 1 to {MAX_PAGE}, "
                           f"not {text[:40]!r}", field="limit")
    return int(text)


def metadata_page(first: int = 0, limit: int = 1000) -> MetadataPage:
    """Entries from offset ``first`` on (at most ``limit``), with where the log stands."""
    with engine().bound():
        entries = metadata_log.read(first, limit)
        head, start = metadata_log.head(), metadata_log.start()
    following = entries[-1].offset + 1 if entries else max(first, start)
    return MetadataPage(entries=[e.as_json() for e in entries], start=start, head=head,
                        applied=store_projection.applied_offset(), next=following)
