"""Raw-SQL helpers: JSON array columns measured in SQL and decoded in bulk, and keys cut
into ``IN`` lists."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from django.db.models import Func, IntegerField, QuerySet, TextField
from django.db.models.functions import Cast

from cluster.models import Partition


T = TypeVar("T")
# Keys in one ``IN`` list: well below SQLite's parameter limit (32,766), each query short.
IN_LIST = 900


def in_lists(keys: Sequence[T]) -> Iterator[Sequence[T]]:
    """``keys`` in slices of ``IN_LIST``: a query's ``IN`` list each (a query for many
    topics, not one a topic)."""
    for at in range(0, len(keys), IN_LIST):
        yield keys[at:at + IN_LIST]


def decode_all(texts: Iterable[str | None]) -> list[list[int]]:
    return json.loads("[" + ",".join(t or "[]" for t in texts) + "]")


def with_texts(query: QuerySet[Partition], *columns: str) -> QuerySet[Partition]:
    """``query`` with each JSON column of ``columns`` also read as its text, as
    ``<column>_text``: the ORM's own decode (a converter a row and field) was half of
    reading 100,000 partition rows; ``decode_all`` or ``tuple_parser`` decode the texts."""
    return query.annotate(**{f"{c}_text": Cast(c, TextField()) for c in columns})


def tuple_parser() -> Callable[[str | None], tuple[int, ...]]:
    """A parser of JSON arrays of ints (``with_texts``) into tuples, each distinct text
    decoded once: a partition table's replica lists and LRSs repeat (a few thousand
    distinct ones among 100,000 rows). The same text gives the same tuple."""
    memo: dict[str | None, tuple[int, ...]] = {}

    def parse(text: str | None) -> tuple[int, ...]:
        found = memo.get(text)
        if found is None:
            found = memo[text] = tuple(json.loads(text)) if text else ()
        return found
    return parse


class JsonArrayLength(Func):
    """Length of a JSON array column, in SQL (SQLite json_array_length, PostgreSQL jsonb_)."""
    function = "json_array_length"
    output_field = IntegerField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, function="jsonb_array_length", **extra)


def with_lengths(query: QuerySet[Partition]) -> QuerySet[Partition]:
    return query.annotate(lrs_len=JsonArrayLength("lrs"), replicas_len=JsonArrayLength("replicas"))
