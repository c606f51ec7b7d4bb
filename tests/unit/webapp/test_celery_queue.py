"""Each installation's Celery queue is named after its database; CELERY_QUEUE overrides it."""
from __future__ import annotations

import pytest

from webapp.env import EnvError
from webapp.queues import QUEUE_PREFIX, installation_queue, queue_setting

SQLITE_A = {"ENGINE": "django.db.backends.sqlite3", "NAME": "/srv/a/db.sqlite3"}
SQLITE_B = {"ENGINE": "django.db.backends.sqlite3", "NAME": "/srv/b/db.sqlite3"}
PG = {"ENGINE": "django.db.backends.postgresql", "NAME": "cluster", "HOST": "127.0.0.1",
      "PORT": 5432, "USER": "u", "PASSWORD": "p"}


def test_two_databases_get_two_queues_and_one_database_always_the_same():
    assert installation_queue(SQLITE_A) != installation_queue(SQLITE_B)
    assert installation_queue(SQLITE_A) == installation_queue(dict(SQLITE_A))
    assert installation_queue(PG) != installation_queue({**PG, "PORT": 5433})
    assert installation_queue(PG) != installation_queue({**PG, "HOST": "db.example"})


def test_credentials_and_options_do_not_change_the_queue():
    # A password rotation must not strand the tasks already queued.
    assert installation_queue(PG) == installation_queue({**PG, "PASSWORD": "q",
                                                        "CONN_MAX_AGE": 60})


def test_the_queue_name_is_short_and_plain():
    name = installation_queue(PG)
    assert name.startswith(QUEUE_PREFIX) and len(name) == len(QUEUE_PREFIX) + 12
    assert int(name.removeprefix(QUEUE_PREFIX), 16) >= 0


def test_celery_queue_names_the_queue_and_refuses_what_is_not_a_plain_name():
    assert queue_setting("", SQLITE_A) == installation_queue(SQLITE_A)
    assert queue_setting("shop-1", SQLITE_A) == "shop-1"
    with pytest.raises(EnvError, match="CELERY_QUEUE='a b'"):
        queue_setting("a b", SQLITE_A)
