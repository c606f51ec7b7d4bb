"""One Chromium per session (Debian's, via Playwright); a fresh context per test.

A missing Chromium fails the run (`make test` installs it); nothing is skipped.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.django_fixtures import *  # noqa: F401,F403
from tests.waits import BROWSER_WAIT_MS

# Playwright's sync API keeps an event loop running in this thread; the ORM
# calls tests make between page actions are still plain synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
WIDE, NARROW = {"width": 1280, "height": 900}, {"width": 400, "height": 860}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `bash scripts/ensure_chromium.sh`")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def new_page(browser, live_server) -> Iterator[Callable[..., object]]:
    """new_page(user=None, viewport=WIDE): a page logged in as ``user`` via its session."""
    contexts = []

    def make(user=None, viewport: dict[str, int] = WIDE):
        context = browser.new_context(viewport=viewport, base_url=live_server.url)
        context.set_default_timeout(BROWSER_WAIT_MS)
        if user is not None:
            context.add_cookies([_session_cookie(user, live_server.url)])
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def _session_cookie(user, url: str) -> dict[str, object]:
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    return {"name": settings.SESSION_COOKIE_NAME,
            "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": url}


@pytest.fixture
def shoot() -> Callable[[object, str], Path]:
    """Save a full-page screenshot under var/screenshots/ (a test artifact, not committed)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def save(page, name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path
    return save
