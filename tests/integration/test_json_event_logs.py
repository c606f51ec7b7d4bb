"""LOG_FORMAT=json: one JSON line per stored event in the log directory."""
from __future__ import annotations

import json
import logging.config

import pytest

from webapp.logconfig import EVENTS_FILE, logging_config
from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db]
FIELDS = {"id", "at", "actor", "object_type", "object_name", "operation", "params", "result"}


@pytest.fixture
def json_logs(tmp_path, settings):
    logging.config.dictConfig(logging_config("json", tmp_path, "WARNING"))
    yield tmp_path / EVENTS_FILE
    logging.config.dictConfig(settings.LOGGING)


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_logged_event_is_one_json_line_with_the_event_fields(
        json_logs, django_capture_on_commit_callbacks):
    from cluster.models import Event

    with django_capture_on_commit_callbacks(execute=True):
        register_spus(0, 1, rack="rack-a")
    logged = lines(json_logs)
    stored = list(Event.objects.order_by("id"))
    assert [line["id"] for line in logged] == [e.pk for e in stored]
    assert all(set(line) == FIELDS for line in logged)
    assert logged[0]["operation"] == stored[0].operation
    assert logged[0]["object_name"] == "0" and logged[0]["params"] == stored[0].params


def test_a_rolled_back_change_leaves_no_line(json_logs, django_capture_on_commit_callbacks):
    from django.db import transaction

    from cluster.services.events import log_event

    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(RuntimeError), transaction.atomic():
            log_event("test", "topic", "gone", "create")
            raise RuntimeError("rolled back")
    assert not json_logs.exists() or lines(json_logs) == []


@pytest.mark.redis
def test_partition_status_events_of_the_replication_engine_are_logged_too(
        json_logs, redis_url, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        register_spus(0, 1, 2, online=True)
        run("topic", "create", "t", "--partitions", "3", "--replication", "3")
        run("produce", "t", "--count", "1", "--acks", "all")
        run("spu", "offline", "0")
    status = [line for line in lines(json_logs) if line["operation"] == "status"]
    assert status and all(line["object_type"] == "partition" for line in status)
    lrs_moves = [line["params"]["lrs"] for line in status if "lrs" in line["params"]]
    assert len(lrs_moves) == 3
    assert all(0 in move["from"] and 0 not in move["to"] for move in lrs_moves)


def test_text_format_writes_no_event_lines(tmp_path, settings):
    logging.config.dictConfig(logging_config("text", tmp_path, "WARNING"))
    try:
        from cluster.services.events import log_event

        log_event("test", "topic", "t", "create")
    finally:
        logging.config.dictConfig(settings.LOGGING)
    assert not (tmp_path / EVENTS_FILE).exists()
