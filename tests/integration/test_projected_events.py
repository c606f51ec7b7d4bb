"""The event rows the store projection writes (projections/store.py, ``_insert_events``):
one row per logged entry however often it is applied, its parameters as stored JSON, its
time stamped, and the same on PostgreSQL as on SQLite (the rows are written with one
prepared INSERT, not the ORM)."""
from __future__ import annotations

import pytest
from django.db import transaction

from cluster.adapters.metadata_log import Entry
from cluster.models import Event
from cluster.projections.store import apply_entries
from tests.helpers import passed_on_postgresql



def _entries(first: int, n: int) -> list[Entry]:
    return [Entry(first + i, {"type": "partition", "topic": "orders", "partition": i,
                              "leader": 2, "lrs": [2, 3], "replicas": [1, 2, 3],
                              "resolution": "online", "epoch": 4, "reason": "SPU 1 offline",
                              "changed": {"leader": [1, 2], "lrs": [[1, 2, 3], [2, 3]]}})
            for i in range(n)]


@pytest.mark.django_db(transaction=True)
def test_projected_events_are_stored_once_however_often_their_entries_are_applied():
    entries = _entries(1000, 25)
    with transaction.atomic():
        made = apply_entries(entries)
    with transaction.atomic():
        again = apply_entries(entries[10:])  # a replay of what was applied already
    assert len(made) == 25 and len(again) == 15
    rows = list(Event.objects.filter(log_offset__gte=1000).order_by("log_offset"))
    assert [row.log_offset for row in rows] == [e.offset for e in entries]
    first = rows[0]
    assert (first.actor, first.object_type, first.object_name, first.operation) == (
        "partition-controller", "partition", "orders/0", "status")
    assert first.params == {"leader": [1, 2], "lrs": [[1, 2, 3], [2, 3]]}
    assert first.result == "SPU 1 offline"
    # Stamped as the ORM stamps auto_now_add, and on the events handed to the pages too.
    assert first.at is not None and made[0].at == first.at
    assert Event.objects.filter(log_offset__gte=1000, at__isnull=True).count() == 0


def test_projected_events_are_stored_once_on_postgresql_too():
    """The same test in a fresh PostgreSQL database of its own (whatever database the
    suite itself runs on): the JSON and time columns take that backend's values."""
    passed_on_postgresql(__file__, "however_often", "h33events", 1)


def test_an_event_built_for_the_projection_is_the_one_keywords_would_build():
    from cluster.projections.events import _new

    given = dict(actor="sc", object_type="partition", object_name="orders/3",
                 operation="status", params={"leader": [1, 2]}, result="SPU 1 offline")
    fast, plain = _new(**given), Event(**given)
    names = [f.attname for f in Event._meta.concrete_fields]
    assert [getattr(fast, n) for n in names] == [getattr(plain, n) for n in names]
    assert fast._state.adding and fast._state.db is None


def test_a_rows_spu_lists_are_stored_as_json_dumps_writes_them():
    import json

    from cluster.projections.store import _ints_json

    for values in ([], [7], [12, 0, 49], [True, 2], [None], ["a"], (1, 2)):
        assert _ints_json(values) == json.dumps(values)
