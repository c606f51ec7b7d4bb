"""A unit's log entries are one stream entry (metadata_log._APPEND_SCRIPT): every read, from
any offset, with any limit and end, gives the entries one by one, as if each were its own;
a trim never cuts a unit's entry in two."""
from __future__ import annotations

import json

import pytest

from cluster.adapters import metadata_log
from cluster.adapters.redis_keys import client
from cluster.ports import bound_to_store

pytestmark = [pytest.mark.django_db, pytest.mark.redis]
UNITS = (5, 1, 3, 1, 1, 4)  # entries a unit appends, in order


@pytest.fixture
def logged(redis_url):
    """Units of ``UNITS`` entries appended as a save appends them; their offsets."""
    offsets = []
    with bound_to_store():
        for unit, size in enumerate(UNITS):
            texts = [json.dumps({"type": "event", "unit": unit, "n": n}) for n in range(size)]
            first = client().eval(metadata_log._APPEND_SCRIPT, 2, metadata_log.head_key(),
                                  metadata_log.stream_key(), *metadata_log.append_args(texts))
            offsets += [(first + n, unit, n) for n in range(size)]
    return offsets


def test_every_read_gives_the_entries_one_by_one_whatever_its_range(logged):
    flat = [(offset, {"type": "event", "unit": unit, "n": n}) for offset, unit, n in logged]
    head = flat[-1][0]
    with bound_to_store():
        assert client().xlen(metadata_log.stream_key()) == len(UNITS)
        for first in range(0, head + 2):
            for limit in range(1, len(flat) + 2):
                for last in (None, *range(first, head + 2)):
                    got = [(e.offset, e.data) for e in metadata_log.read(first, limit, last)]
                    want = [e for e in flat if e[0] >= first and (last is None or e[0] <= last)]
                    assert got == want[:limit], (first, limit, last)
        assert [(e.offset, e.data) for e in metadata_log.read_all(0, batch=2)] == flat
        held = metadata_log.read_holding(3, head, [b'"unit": 2'], batch=2, contiguous=True)
        assert [e.offset for e in held] == [o for o, unit, _ in logged if unit == 2]


def test_a_trim_keeps_the_unit_that_holds_its_bound_whole(logged):
    third_unit = [offset for offset, unit, _ in logged if unit == 2]
    with bound_to_store():
        metadata_log.trim(applied=third_unit[1] - 1, retention=0)
        assert metadata_log.start() == third_unit[0]
        assert [e.offset for e in metadata_log.read(0, 100)] == [
            offset for offset, unit, _ in logged if unit >= 2]
        metadata_log.trim(applied=third_unit[-1], retention=0)
        assert metadata_log.start() == third_unit[-1] + 1


def test_a_failover_is_one_stream_entry_however_many_entries_it_logs(redis_url):
    from cluster.services import topic_create
    from cluster.services.replication import replication_tick
    from tests.helpers import register_spus

    register_spus(0, 1, 2, online=True)
    topic_create(name="t", partitions=12, replication=3)
    replication_tick(dispatch=lambda _: None)
    with bound_to_store():
        stream, head = client().xlen(metadata_log.stream_key()), metadata_log.head()
    from django.core.management import call_command
    from io import StringIO
    call_command("spu", "offline", "0", stdout=StringIO(), stderr=StringIO())
    with bound_to_store():
        grew = client().xlen(metadata_log.stream_key()) - stream
        entries = metadata_log.read(head + 1, 1000)
    assert len(entries) >= 12 and grew <= 2, "the intent and the unit's entries"
    assert [e.offset for e in entries] == list(range(head + 1, head + 1 + len(entries)))
