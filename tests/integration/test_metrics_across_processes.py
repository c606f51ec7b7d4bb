"""Counters incremented in another process show in one scrape of this one."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers import register_spus, run

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]


def in_another_process(*args: str, redis_url: str) -> None:
    from django.db import connection

    env = {**os.environ, "REDIS_URL": redis_url,
           "DATABASE_URL": f"sqlite:///{connection.settings_dict['NAME']}"}
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=120)


def produced(client, acks: str) -> float:
    text = client.get("/metrics").content.decode()
    return next(s.value for f in text_string_to_metric_families(text) for s in f.samples
                if s.name == "controlroom_records_produced_total" and s.labels == {"acks": acks})


def test_records_produced_by_a_command_process_are_counted_in_the_web_scrape(client, redis_url):
    register_spus(0, 1, online=True)
    run("topic", "create", "t", "--partitions", "1", "--replication", "2")
    run("produce", "t", "--count", "2", "--acks", "1")
    in_another_process("produce", "t", "--count", "5", "--acks", "1", redis_url=redis_url)
    assert produced(client, "1") == 7
