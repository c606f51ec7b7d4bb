"""Suite-wide: nothing Django-bound here, so `pytest tests/unit -p no:django` runs alone.

Integration and browser tests get their fixtures from tests/django_fixtures.py
through their own conftest files.
"""
from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests run last.

    Playwright's sync API leaves its event loop marked as running in the main thread
    from the first browser test to the end of the session, and asgiref's async_to_sync
    refuses to run in such a thread: an integration test (or product code it calls)
    using async_to_sync after a browser test fails with "You cannot use AsyncToSync in
    the same thread as an async event loop". The sort is stable: order is kept otherwise.
    """
    items.sort(key=lambda item: "tests/browser/" in str(item.path))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    """A failed test on a real stack (tests/live_stack.py) shows the end of each of its
    processes' logs: a CI run keeps nothing else of them."""
    outcome = yield
    report = outcome.get_result()
    stack = getattr(item, "funcargs", {}).get("stack")
    if report.failed and hasattr(stack, "log_tails"):
        report.sections.append(("stack logs", stack.log_tails()))
