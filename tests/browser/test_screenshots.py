"""Screenshots of each main page at 1280 px and 400 px, on the seed's 12-SPU cluster."""
from __future__ import annotations

import pytest

from tests.browser.conftest import NARROW, WIDE

MAIN_PAGES = {"overview": "/", "spus": "/spus/", "topics": "/topics/",
              "topic-detail": "/topics/orders/", "create-topic": "/new-topic/",
              "upload": "/new-topic/upload/", "heatmaps": "/heatmaps/", "events": "/events/",
              "partitions": "/partitions/"}


@pytest.fixture
def demo_cluster(transactional_db):
    from cluster.services.demo import demo_load
    from cluster.services.spus import spu_set_resolution
    from cluster.core.spus import SpuResolution

    demo_load()
    # One SPU down so the health list and skew colours have something to show.
    spu_set_resolution(spu_id=4, resolution=SpuResolution.OFFLINE)


def test_main_pages_render_at_both_widths(new_page, operator, demo_cluster, shoot):
    for label, viewport in (("1280", WIDE), ("400", NARROW)):
        page = new_page(operator, viewport)
        for name, url in MAIN_PAGES.items():
            page.goto(url)
            page.wait_for_load_state("networkidle") if name == "heatmaps" else None
            assert page.locator("h1").first.is_visible()
            shoot(page, f"{name}-{label}")
