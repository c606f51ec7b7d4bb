"""Self-healing's settings row as the projection of its ``healing-set`` intents (issue 32).

``healing enable/disable/set`` (healing/services.py) validate the change, append its
intent to the metadata log (who asked in ``by``) and return once the store's catch-up
applied it: the catch-up hands the entry here (``Engine.intent_projections``, wired in
composition/bootstrap.py), inside its transaction, and this writes the config row from the
entry alone: the mode for ``mode``, else the named setting. Its event row takes the
entry's offset.

Idempotent: an entry applied again writes the same value (a replay of the log from an
earlier offset applies the settings in their order and ends where they ended). Each entry
changes one setting of the row it reads under the catch-up's lock, so two settings changed
at once both stand.
"""
from __future__ import annotations

from typing import Any

from cluster.models import Event
from healing.core import Mode
from healing.models import HealingConfig

MODE = "mode"  # the name a switch's entry carries


def apply(entry: dict[str, Any]) -> list[Event]:
    """Write the setting a ``healing-set`` entry carries; its event row, unsaved (none for
    an entry the projection cannot read: an unknown mode)."""
    name, value = entry["name"], entry["value"]
    if name == MODE and value not in {m.value for m in Mode}:
        return []
    # Under the row's lock.
    row = HealingConfig.objects.select_for_update().get_or_create(
        pk=HealingConfig.SINGLETON)[0]
    params: dict[str, Any]
    if name == MODE:
        row.mode, params = value, {"mode": value}
        row.save(update_fields=["mode", "updated_at"])
    else:
        row.values, params = {**row.values, name: value}, {"value": value}
        row.save(update_fields=["values", "updated_at"])
    return [Event(actor=entry.get("by") or "system", object_type="healing",
                  object_name=name, operation="set", params=params)]
