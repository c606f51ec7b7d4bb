"""Issue 35.7 (c): the self-healing page marks the active mode, and every setting has its
own field with its unit; a refused value is shown next to that setting's field."""
from __future__ import annotations

import re

import pytest

from healing.models import HealingConfig

pytestmark = [pytest.mark.django_db]


def _row(page: str, name: str) -> str:
    match = re.search(rf'<tr data-setting="{name}"[^>]*>(.*?)</tr>', page, re.S)
    assert match, name
    return match.group(1)


def test_the_active_mode_is_marked_and_the_others_are_not(operator_client):
    assert operator_client.post("/healing/mode/", {"mode": "notify-only"}).status_code == 302
    page = operator_client.get("/healing/").content.decode()
    assert re.search(r'value="notify-only" aria-pressed="true" class="active"', page)
    assert 'value="off" aria-pressed="false"' in page
    assert 'value="heal" aria-pressed="false"' in page
    assert '<span id="healing-mode" class="badge mode-now">notify-only</span>' in page


def test_each_setting_is_its_own_field_with_its_unit(operator_client):
    page = operator_client.get("/healing/").content.decode()
    heal_after = _row(page, "spu_down_heal_after_s")
    assert 'id="setting-spu_down_heal_after_s"' in heal_after and 'value="600.0"' in heal_after
    assert '<span class="unit">seconds</span>' in heal_after
    assert '<input type="hidden" name="name" value="spu_down_heal_after_s">' in heal_after
    assert '<span class="unit">%</span>' in _row(page, "leader_skew_percent")
    throttle = _row(page, "throttle_bytes_per_s")
    assert '<span class="unit">bytes/s</span>' in throttle and "(10 MiB/s)" in throttle
    assert '<option value="true" selected>on</option>' in _row(page, "spu_down_enabled")
    assert page.count('class="setting-form inline"') == page.count("<tr data-setting=") > 10


def test_a_field_sets_its_own_setting_by_name(operator_client):
    answer = operator_client.post("/healing/settings/", {"name": "fix_after_s", "value": "30"})
    assert answer.status_code == 302
    assert HealingConfig.objects.get().values["fix_after_s"] == 30.0
    page = operator_client.get("/healing/").content.decode()
    assert 'value="30.0"' in _row(page, "fix_after_s")


def test_a_refused_value_is_shown_next_to_its_own_field(operator_client):
    page = operator_client.post("/healing/settings/",
                                {"name": "moves_per_hour", "value": "0"}).content.decode()
    row = _row(page, "moves_per_hour")
    assert 'id="id_value-error"' in row and "moves_per_hour must be" in row
    assert 'value="0"' in row and 'aria-invalid="true"' in row
    assert 'id="id_value-error"' not in _row(page, "max_moves")


def test_a_viewer_reads_each_value_with_its_unit_and_no_field(viewer_client):
    page = viewer_client.get("/healing/").content.decode()
    assert '<span class="value">600.0 seconds</span>' in _row(page, "spu_down_heal_after_s")
    assert "<form" not in _row(page, "fix_after_s")
