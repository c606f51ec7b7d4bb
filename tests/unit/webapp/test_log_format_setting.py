"""LOG_FORMAT: text or json, anything else stops start-up with the variable's name."""
from __future__ import annotations

import pytest

from webapp.env import EnvError, env_choice
from webapp.logconfig import EVENT_LOGGER, FORMATS, logging_config


def test_log_format_defaults_to_text_and_refuses_other_values(monkeypatch):
    monkeypatch.delenv("LOG_FORMAT", raising=False)
    assert env_choice("LOG_FORMAT", "text", FORMATS) == "text"
    monkeypatch.setenv("LOG_FORMAT", "xml")
    with pytest.raises(EnvError, match="LOG_FORMAT='xml' must be one of: text, json"):
        env_choice("LOG_FORMAT", "text", FORMATS)


def test_json_sends_events_to_a_file_in_the_log_directory(tmp_path):
    config = logging_config("json", tmp_path, "INFO")
    assert config["handlers"]["event_lines"]["filename"] == str(tmp_path / "events.jsonl")
    assert config["loggers"][EVENT_LOGGER]["handlers"] == ["event_lines"]


def test_text_keeps_the_event_logger_quiet(tmp_path):
    config = logging_config("text", tmp_path, "INFO")
    assert config["loggers"][EVENT_LOGGER] == {"handlers": [], "level": "WARNING",
                                               "propagate": False}
