"""A new topic's partition rows written in bulk: COPY on PostgreSQL, one executemany on
SQLite, each row's JSON written as text once.

The ORM's bulk_create built a model instance and encoded three JSON values per row:
6.9 s for a topic of 100,000 partitions on PostgreSQL. A list of ints prints as JSON
(``str([0, 1, 2])`` is ``[0, 1, 2]``), so the rows are text before the database sees them.
"""
from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

from cluster.models import Partition

COLUMNS = ("topic_id", "index", "replicas", "initial_leader", "leader", "lrs", "resolution",
           "hw", "leo", "replica_status", "epoch", "written_by")
BATCH = 5000
NULL = "\\N"


def insert_partitions(topic_pk: int, replicas: Sequence[Sequence[int]],
                      leaders: Sequence[int | None], lrs: Sequence[Sequence[int]],
                      resolutions: Sequence[str]) -> None:
    """Rows 0..n-1 of a topic (columns by partition index), in the caller's transaction."""
    if not replicas:
        return
    if connection.vendor == "postgresql":
        _copy(topic_pk, replicas, leaders, lrs, resolutions)
    else:
        _executemany(topic_pk, replicas, leaders, lrs, resolutions)


def _copy(topic_pk: int, replicas: Sequence[Sequence[int]], leaders: Sequence[int | None],
          lrs: Sequence[Sequence[int]], resolutions: Sequence[str]) -> None:
    # Text format: tab-separated, \N for NULL; none of the values holds a tab or backslash.
    lines = [f"{topic_pk}\t{index}\t{list(reps)}\t{reps[0] if reps else 0}\t"
             f"{NULL if leader is None else leader}\t{list(live)}\t{res}\t0\t0\t[]\t0\t0\n"
             for index, (reps, leader, live, res)
             in enumerate(zip(replicas, leaders, lrs, resolutions))]
    columns = ", ".join(connection.ops.quote_name(c) for c in COLUMNS)
    table = connection.ops.quote_name(Partition._meta.db_table)
    with connection.cursor() as cursor:
        with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for start in range(0, len(lines), BATCH):
                copy.write("".join(lines[start:start + BATCH]))


def _executemany(topic_pk: int, replicas: Sequence[Sequence[int]],
                 leaders: Sequence[int | None], lrs: Sequence[Sequence[int]],
                 resolutions: Sequence[str]) -> None:
    rows = [(topic_pk, index, str(list(reps)), reps[0] if reps else 0, leader, str(list(live)),
             res, 0, 0, "[]", 0, 0)
            for index, (reps, leader, live, res)
            in enumerate(zip(replicas, leaders, lrs, resolutions))]
    columns = ", ".join(connection.ops.quote_name(c) for c in COLUMNS)
    table = connection.ops.quote_name(Partition._meta.db_table)
    marks = ", ".join(["%s"] * len(COLUMNS))
    with connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)
