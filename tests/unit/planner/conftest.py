from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_live_updates_unless_redis():
    """The planner core never publishes; this shadows the Django-bound fixture
    of tests/conftest.py so these tests also run with ``-p no:django``."""
