"""``healing enable [--notify-only] | disable | set NAME VALUE | status [--json] | check``."""
from __future__ import annotations

from typing import Any

from cluster.management.commands._cli import SubcommandCommand
from healing import core
from healing.selectors import HealingStatus, healing_status
from healing.services import healing_check, healing_disable, healing_enable, healing_set


class Command(SubcommandCommand):
    help = "Self-healing: switch it, set its thresholds, read its anomalies."
    # A detection run logs its actions in the metadata log: it needs this store's Redis.
    redis_actions = frozenset({"check"})

    def add_actions(self, actions: Any) -> None:
        enable = actions.add_parser("enable", help="heal (or, with --notify-only, only plan)")
        enable.add_argument("--notify-only", action="store_true",
                            help="dry run: plans are made and shown, never applied")
        enable.add_argument("--json", action="store_true")
        disable = actions.add_parser("disable", help="detect and alert only; no plan")
        disable.add_argument("--json", action="store_true")
        setting = actions.add_parser("set", help="set a switch or threshold by name")
        setting.add_argument("name", metavar="NAME", help=", ".join(core.SETTING_NAMES))
        setting.add_argument("value", metavar="VALUE")
        setting.add_argument("--json", action="store_true")
        status = actions.add_parser("status", help="mode, settings and open anomalies")
        status.add_argument("--json", action="store_true")
        check = actions.add_parser("check", help="run the detector once now (the beat's task)")
        check.add_argument("--json", action="store_true")

    def handle_enable(self, *, notify_only: bool, json: bool, **_: Any) -> None:
        healing_enable(notify_only=notify_only, by="cli")
        self._status(json)

    def handle_disable(self, *, json: bool, **_: Any) -> None:
        healing_disable(by="cli")
        self._status(json)

    def handle_set(self, *, name: str, value: str, json: bool, **_: Any) -> None:
        settings = healing_set(name=name, value=value, by="cli")
        self.emit(settings.as_dict(), json, f"{name} = {getattr(settings, name)}")

    def handle_status(self, *, json: bool, **_: Any) -> None:
        self._status(json)

    def handle_check(self, *, json: bool, **_: Any) -> None:
        result = healing_check()
        self.emit(result, json, f"checked: {result['anomalies']} anomalies"
                                + (f"; planned {result['planned']}" if result["planned"] else "")
                                + (f"; waiting: {result['waiting']}" if result["waiting"] else ""))

    def _status(self, json: bool) -> None:
        status = healing_status()
        self.emit(status, json, status_text(status))


def status_text(s: HealingStatus) -> str:
    lines = [f"self-healing: {s['mode']}" + (f" (waiting: {s['waiting']})" if s["waiting"] else "")]
    lines += [f"  {a['type']} {a['subject']}: {a['state']}"
              + (f" (plan {a['plan']})" if a["plan"] else "") + f" - {a['detail']}"
              for a in s["anomalies"]]
    if not s["anomalies"]:
        lines.append("  no open anomaly")
    return "\n".join(lines)
