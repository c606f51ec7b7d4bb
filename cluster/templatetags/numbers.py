"""Numbers for people: bytes in KiB/MiB/GiB, ratios rounded, times as <time> elements
that static/js/time.js shows in the reader's own time zone."""
from __future__ import annotations

from datetime import datetime, timezone as dt_timezone

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()

UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB")


@register.filter
def human_bytes(value: object) -> str:
    """1536 -> "1.5 KiB"; three significant figures are plenty to compare plans."""
    if value is None or value == "":
        return "–"
    try:
        size = float(value)
    except (TypeError, ValueError):
        return str(value)
    unit = 0
    while abs(size) >= 1024 and unit < len(UNITS) - 1:
        size /= 1024
        unit += 1
    if unit == 0:
        return f"{int(size):,} byte{'' if int(size) == 1 else 's'}"
    return f"{size:.3g} {UNITS[unit]}" if abs(size) < 100 else f"{size:,.0f} {UNITS[unit]}"


@register.filter
def ratio(value: object, places: int = 2) -> str:
    """1.1666666666666667 -> "1.17"; whole numbers stay whole."""
    if value is None or value == "":
        return "–"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:,.{int(places)}f}"


@register.filter
def byte_rate(value: object) -> str:
    """1536.0 -> "1.5 KiB/s"."""
    shown = human_bytes(value)
    return shown if shown == "–" else f"{shown}/s"


@register.filter
def duration(value: object) -> str:
    """Seconds for people: 42.4 -> "42 s", 185 -> "3 min 5 s", 7300 -> "2 h 1 min"."""
    if value is None or value == "" or isinstance(value, bool):
        return "–"
    try:
        seconds = round(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


@register.filter
def local_time(value: datetime | str | None) -> SafeString | str:
    """A <time> with the UTC moment as text; the page shows it short and local.
    Takes an aware datetime or its ISO text (the plan records carry ISO text)."""
    if isinstance(value, str) and value:
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return value
    if not value:
        return "–"
    utc = value.astimezone(dt_timezone.utc) if timezone.is_aware(value) else value
    return format_html('<time datetime="{}" title="{} UTC">{}</time>', utc.isoformat(),
                       utc.strftime("%Y-%m-%d %H:%M:%S"), utc.strftime("%Y-%m-%d %H:%M"))
