"""``healing set NAME VALUE``: typed, bounded, refused with the reason."""
from __future__ import annotations

import pytest

from healing.core import SettingError, Settings, check_thresholds, parse_setting, settings_from


def test_names_take_their_own_type():
    assert parse_setting("spu_down_alert_after_s", "2") == 2.0
    assert parse_setting("moves_per_hour", "120") == 120
    assert parse_setting("goal_violation_enabled", "on") is True
    assert parse_setting("rack_spread_enabled", "false") is False


@pytest.mark.parametrize("name, value, reason", [
    ("spu_down_heal_after", "5", "unknown setting"),
    ("spu_down_heal_after_s", "soon", "must be a number"),
    ("spu_down_heal_after_s", "-1", "must be 0 to"),
    ("spu_down_heal_after_s", "nan", "must be 0 to"),
    ("moves_per_hour", "1.5", "must be an integer"),
    ("moves_per_hour", "0", "must be 1 to"),
    ("slow_spu_enabled", "maybe", "true or false"),
])
def test_a_bad_name_or_value_is_refused_with_the_reason(name, value, reason):
    with pytest.raises(SettingError, match=reason):
        parse_setting(name, value)


def test_the_heal_threshold_may_not_come_before_the_alert():
    with pytest.raises(SettingError, match="must not be below"):
        check_thresholds(Settings(spu_down_alert_after_s=10, spu_down_heal_after_s=5))


def test_stored_values_override_defaults_and_stale_keys_are_ignored():
    s = settings_from({"spu_down_heal_after_s": 5, "gone_setting": 1})
    assert s.spu_down_heal_after_s == 5 and s.leader_skew_percent == 10
