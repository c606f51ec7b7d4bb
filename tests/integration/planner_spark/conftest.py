from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_live_updates_unless_redis():
    """Shadows the Django-bound fixture of tests/django_fixtures.py (Spark needs no Django)."""


@pytest.fixture(scope="session")
def _local_spark_made():
    """Stops, at the end of the worker's session, the local session the tests last had."""
    made: list = []
    yield made
    if made:
        made[-1].stop()


@pytest.fixture
def spark(_local_spark_made):
    """The local session, asked for at every test: a module on a standalone master (in the
    same xdist worker, in whatever order loadfile hands out files) stops whichever session is
    active on another master, so one kept for the whole worker could be a stopped one
    (``'NoneType' object has no attribute 'broadcast'``). ``spark_session`` hands back the
    running one, or makes it again."""
    from planner.spark.session import spark_session

    session = spark_session("local[2]", "planner-tests")
    _local_spark_made.append(session)
    return session
