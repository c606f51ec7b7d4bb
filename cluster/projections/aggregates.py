"""Partition counts per topic, per (topic, SPU) and per failover move: a projection of
the partition rows, written in the same transaction as the rows it counts.

Every writer of a partition's replicas, leader or LRS calls it: the store projection
(``apply_changes`` before it overwrites rows, in catch_up's transaction), topic create
(``add_columns``) and topic delete (``remove_topic``). A change is counted as what the
rows contribute after minus what they contributed before (cluster/core/tally.py), so
the work follows what changed, never the cluster's size. ``rebuild`` counts every row
from scratch: for a store that predates the counts, or rows written behind the
projection's back (the reconcile beat rebuilds when it heals drifted rows).
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.db import connection, transaction
from django.db.models import F

from cluster.core.tally import (FIELDS, PartitionCounted, Tally, tally_of,
                                tally_of_columns, tally_of_topic)
from cluster.models import ClusterState, FailoverCount, Partition, Topic, TopicSpuCount
from cluster.selectors.stats import partition_columns
from cluster.perf import gc_paused

# Past this share of a topic's rows, reading the whole topic is cheaper than IN lists (it
# reads at most four times the rows wanted); below it, IN lists: a failover changes 6,000
# rows of a 100,000-partition topic, and reading all of it five times (one per batch of
# entries) was a quarter of that tick.
WHOLE_TOPIC_SHARE = 0.25
CHUNK = 500


def apply_changes(statuses: Mapping[tuple[int, int], Sequence[Any]]) -> None:
    """Count the store projection's new statuses ((topic pk, index) -> [replicas JSON,
    preferred leader, leader, LRS JSON, ...]) against the rows they overwrite."""
    if not statuses:
        return
    old = _rows_at(statuses.keys())
    keys = [k for k in statuses if k in old]
    rows = [statuses[k] for k in keys]
    # Decoded in bulk, one C call a column: a call per row cost a failover's tick 50 ms.
    replicas = json.loads("[" + ",".join([row[0] for row in rows]) + "]")
    lrs = json.loads("[" + ",".join([row[3] for row in rows]) + "]")
    new = [PartitionCounted(pk, reps, row[2], live)
           for (pk, _), row, reps, live in zip(keys, rows, replicas, lrs)]
    delta = tally_of(new)
    delta.add(tally_of(old.values()), sign=-1)
    _write(delta.nonzero())


def add_columns(topic_pk: int, replicas: Sequence[Sequence[int]],
                leaders: Sequence[int | None], lrs: Sequence[Sequence[int]]) -> None:
    """Count a new topic's partition rows, given as columns by partition index."""
    _write(tally_of_topic(topic_pk, replicas, leaders, lrs))


def remove_topic(topic_pk: int) -> None:
    """Uncount a topic about to be deleted; its (topic, SPU) cells go with it (cascade),
    its failover moves are subtracted here."""
    removed = tally_of(_topic_rows(topic_pk))
    _write(Tally(failover=removed.failover), sign=-1)


@transaction.atomic
def rebuild() -> None:
    """Count every partition row from scratch, replacing what was counted."""
    # A write first, as catch_up's: no other writer of the rows or counts runs meanwhile.
    ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
    ClusterState.objects.filter(pk=ClusterState.SINGLETON).update(
        applied_offset=F("applied_offset"))
    cols = partition_columns()
    tally = tally_of_columns(cols.topic_ids, cols.replicas, cols.leaders, cols.lrs)
    TopicSpuCount.objects.all().delete()
    FailoverCount.objects.all().delete()
    _write(tally.nonzero())


def counted() -> Tally:
    """What the counts hold now, zero cells left out (tests compare it with a rebuild)."""
    cells = {(topic, spu): list(rest) for topic, spu, *rest in
             TopicSpuCount.objects.values_list("topic_id", "spu", *FIELDS)}
    failover = {(a, b): n for a, b, n in
                FailoverCount.objects.values_list("failed", "taker", "partitions")}
    return Tally(cells, Counter(failover)).nonzero()


def _rows_at(keys: Iterable[tuple[int, int]]) -> dict[tuple[int, int], PartitionCounted]:
    by_topic: dict[int, list[int]] = {}
    for pk, index in keys:
        by_topic.setdefault(pk, []).append(index)
    rows: dict[tuple[int, int], PartitionCounted] = {}
    pks = list(by_topic)
    sizes: dict[int, int] = {}
    for i in range(0, len(pks), CHUNK):
        sizes.update(Topic.objects.filter(pk__in=pks[i:i + CHUNK]).values_list("pk", "partitions"))
    # Topics read whole: a large share of their rows wanted, read together (a query a
    # topic was most of the first tick's counting at 2,000 small topics).
    whole = [pk for pk, indexes in by_topic.items()
             if pk in sizes and len(indexes) > WHOLE_TOPIC_SHARE * sizes[pk]]
    for i in range(0, len(whole), CHUNK):
        chunk = whole[i:i + CHUNK]
        found = _select(f"topic_id IN ({', '.join(['%s'] * len(chunk))})", chunk)
        wanted = {(pk, index) for pk in chunk for index in by_topic[pk]}
        rows.update((key, row) for key, row in found if key in wanted)
    for pk in set(by_topic).difference(whole):
        indexes = by_topic[pk]
        rows.update(row for i in range(0, len(indexes), CHUNK) for row in _select(
            f"topic_id = %s AND {_q('index')} IN ({', '.join(['%s'] * len(indexes[i:i + CHUNK]))})",
            [pk, *indexes[i:i + CHUNK]]))
    return rows


def _topic_rows(pk: int) -> list[PartitionCounted]:
    return [row for _, row in _select("topic_id = %s", [pk])]


def _select(where: str, params: list[int]) -> list[tuple[tuple[int, int], PartitionCounted]]:
    # Raw SQL, JSON as text decoded in bulk: the ORM's per-row JSON decoding costs ~5x more.
    text = "{}" if connection.vendor == "sqlite" else "CAST({} AS TEXT)"
    sql = (f"SELECT topic_id, {_q('index')}, leader, {text.format('replicas')}, "
           f"{text.format('lrs')} FROM {_q(Partition._meta.db_table)} WHERE {where}")
    with connection.cursor() as cursor, gc_paused():
        cursor.execute(sql, params)
        rows = cursor.fetchall()
        replicas = json.loads("[" + ",".join(r[3] or "[]" for r in rows) + "]")
        lrs = json.loads("[" + ",".join(r[4] or "[]" for r in rows) + "]")
    return [((r[0], r[1]), PartitionCounted(r[0], reps, r[2], live))
            for r, reps, live in zip(rows, replicas, lrs)]


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


def _write(delta: Tally, sign: int = 1) -> None:
    """Add ``delta`` (times ``sign``) to the stored counts: read the touched cells, add,
    write back in bulk. Callers hold the store's write lock (catch_up's state row, topic
    create's cursor row), so no two writers interleave between the read and the write."""
    _write_cells(delta.cells, sign)
    _write_failover(delta.failover, sign)


def _write_cells(cells: Mapping[tuple[int, int], list[int]], sign: int) -> None:
    if not cells:
        return
    topics = sorted({topic for topic, _ in cells})
    stored = {}
    for i in range(0, len(topics), CHUNK):
        stored.update({(row.topic_id, row.spu): row for row in
                       TopicSpuCount.objects.filter(topic_id__in=topics[i:i + CHUNK])})
    changed, created = [], []
    for (topic, spu), counts in cells.items():
        row = stored.get((topic, spu))
        if row is None:
            row = TopicSpuCount(topic_id=topic, spu=spu)
            created.append(row)
        else:
            changed.append(row)
        for name, n in zip(FIELDS, counts):
            setattr(row, name, getattr(row, name) + sign * n)
    _set_columns(TopicSpuCount, FIELDS, changed)
    TopicSpuCount.objects.bulk_create(created, batch_size=1000)


def _write_failover(moves: Mapping[tuple[int, int], int], sign: int) -> None:
    if not moves:
        return
    failed = sorted({a for a, _ in moves})
    # The stored counts as plain values: a failover at 100,000 partitions moves pairs of
    # nearly every SPU, and loading the 2,450 rows as models was 70 ms of its tick.
    stored = {(a, b): (pk, n) for pk, a, b, n in FailoverCount.objects.filter(
        failed__in=failed).values_list("pk", "failed", "taker", "partitions")}
    changed, created = [], []
    for (a, b), n in moves.items():
        row = stored.get((a, b))
        if row is None:
            created.append(FailoverCount(failed=a, taker=b, partitions=sign * n))
        else:
            changed.append((row[1] + sign * n, row[0]))
    _update_columns(FailoverCount, ("partitions",), changed)
    FailoverCount.objects.bulk_create(created, batch_size=1000)


def _set_columns(model: type[TopicSpuCount] | type[FailoverCount], names: Sequence[str],
                 rows: Sequence[TopicSpuCount] | Sequence[FailoverCount]) -> None:
    """Store each row's new counts (the integer ``names``) by its key, as ``bulk_update``
    would, but as one prepared UPDATE run per row (executemany): ``bulk_update`` builds a
    CASE WHEN expression per row and field, and resolving those cost 7 s of a
    100,000-partition import (30 SPUs: ~870 failover pairs rewritten per topic created)
    and 0.3 s of a failover's tick at 100,000 partitions (the (topic, SPU) cells)."""
    _update_columns(model, names, [(*(getattr(row, name) for name in names), row.pk)
                                   for row in rows])


def _update_columns(model: type[TopicSpuCount] | type[FailoverCount], names: Sequence[str],
                    values: Sequence[tuple[int, ...]]) -> None:
    """``_set_columns`` given each row's new values, then its primary key."""
    if not values:
        return
    meta = model._meta
    columns = ", ".join(f"{_q(meta.get_field(name).column)} = %s" for name in names)
    sql = f"UPDATE {_q(meta.db_table)} SET {columns} WHERE {_q(meta.pk.column)} = %s"
    with connection.cursor() as cursor:
        cursor.executemany(sql, values)
