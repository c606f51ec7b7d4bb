from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_live_updates_unless_redis():
    """Shadows the Django-bound fixture of tests/django_fixtures.py (Spark needs no Django)."""


@pytest.fixture(scope="session")
def spark():
    from planner.spark.session import spark_session

    session = spark_session("local[2]", "planner-tests")
    yield session
    session.stop()
