"""Logging setup: plain text by default; LOG_FORMAT=json writes one JSON object per line.

With json the event log (cluster/metrics/logs.py) also goes to
``<VAR_DIR>/logs/events.jsonl``, one line per stored event, for log shippers.
Kept free of model imports: Django configures logging before apps load.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

FORMATS = ("text", "json")
EVENT_LOGGER = "controlroom.events"
EVENTS_FILE = "events.jsonl"


class JsonLineFormatter(logging.Formatter):
    """A record's ``event`` fields as they are, else time, level, logger and message."""

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "event", None)
        if fields is None:
            fields = {"at": self.formatTime(record), "level": record.levelname,
                      "logger": record.name, "message": record.getMessage()}
            if record.exc_info:
                fields["exception"] = self.formatException(record.exc_info)
        return json.dumps(fields, default=str, separators=(",", ":"))


def logging_config(fmt: str, log_dir: Path, level: str) -> dict[str, Any]:
    """The LOGGING dict for ``fmt`` (text or json)."""
    formatter = ({"()": JsonLineFormatter} if fmt == "json"
                 else {"format": "%(levelname)s %(name)s %(message)s"})
    handlers: dict[str, Any] = {"console": {"class": "logging.StreamHandler", "formatter": "main"}}
    events: dict[str, Any] = {"handlers": [], "level": "WARNING", "propagate": False}
    if fmt == "json":
        # delay: processes that never log an event do not create the file.
        handlers["event_lines"] = {"class": "logging.FileHandler", "formatter": "main",
                                   "filename": str(log_dir / EVENTS_FILE), "delay": True}
        events = {"handlers": ["event_lines"], "level": "INFO", "propagate": False}
    return {"version": 1, "disable_existing_loggers": False,
            "formatters": {"main": formatter}, "handlers": handlers,
            "root": {"handlers": ["console"], "level": level},
            "loggers": {EVENT_LOGGER: events}}
