"""Huge pages in Chromium: how long a 100,000-partition preview, a 20,000-partition upload
validation and the partition list of a 100,000-partition cluster take to load.

Run: .venv/bin/python tests/bench/bench_live_pages.py
Starts daphne on a throwaway store (tests/stack.py; no worker or beat, so nothing else
competes), registers 30 SPUs in 3 racks and one 100,000-partition topic, then times each
page in Chromium from the click (or navigation) to the load event, three times, and prints
the median, the worst and the HTML size. Goal: each under 2 s. Figures, not assertions.
"""
from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.browser.conftest import ARGS, CHROMIUM  # noqa: E402
from tests.live_stack import running_stack  # noqa: E402

RUNS = 3
BUILD = """
from cluster.models import ClusterState
from cluster.services import spu_register, topic_create
ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
for i in range(30):
    spu_register(spu_id=i, rack="rack-" + "abc"[i % 3], by="bench")
topic_create(name="huge", partitions=100_000, replication=3, by="bench")
"""


def timed(page, prepare, action) -> tuple[float, int]:
    """Seconds from ``action`` (a click or a goto) to the load event; the HTML's size."""
    prepare()
    started = time.monotonic()
    with page.expect_navigation(wait_until="load", timeout=120_000):
        action()
    seconds = time.monotonic() - started
    return seconds, len(page.content().encode())


def fill_preview(page) -> None:
    page.goto("/new-topic/")
    page.fill("input[name=name]", "preview")
    page.fill("input[name=partitions]", "100000")
    page.fill("input[name=replication]", "3")


def fill_upload(page, path: Path) -> None:
    page.goto("/new-topic/upload/")
    page.fill("input[name=name]", "uploaded")
    page.set_input_files("input[name=file]", str(path))


def nothing() -> None:
    """Navigations start from wherever the page is."""


def report(name: str, runs: list[tuple[float, int]]) -> None:
    seconds = [s for s, _ in runs]
    print(f"{name:<42} median {statistics.median(seconds):.2f} s, worst {max(seconds):.2f} s, "
          f"HTML {runs[-1][1] / 1e6:.2f} MB")


def main() -> None:
    from playwright.sync_api import sync_playwright

    var = Path(tempfile.mkdtemp(prefix="bench-live-pages-"))
    upload_file = var / "20000.json"
    upload_file.write_text(json.dumps([{"id": i, "replicas": [i % 30, (i + 1) % 30, (i + 2) % 30]}
                                       for i in range(20_000)], separators=(",", ":")))
    with running_stack(var, worker=False, beat=False, before_start=BUILD) as stack, \
            sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_context(base_url=stack.url).new_page()
        page.goto("/login/")
        page.fill("input[name=username]", "operator")
        page.fill("input[name=password]", stack.password())
        page.click("button[type=submit]")
        report("preview of 100,000 partitions", [timed(
            page, lambda: fill_preview(page), lambda: page.click("button[value=preview]"))
            for _ in range(RUNS)])
        report("validation of a 20,000-partition file", [timed(
            page, lambda: fill_upload(page, upload_file),
            lambda: page.click("button[value=validate]")) for _ in range(RUNS)])
        report("partition list (100,000 partitions)", [timed(
            page, nothing, lambda: page.goto("/partitions/")) for _ in range(RUNS)])
        report("topic page of 100,000 partitions", [timed(
            page, nothing, lambda: page.goto("/topics/huge/")) for _ in range(RUNS)])
        browser.close()


if __name__ == "__main__":
    main()
