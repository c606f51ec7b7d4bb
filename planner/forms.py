"""Workbench forms: a what-if spelled as ``plan rebalance`` takes it, and a grid."""
from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import Any

from django import forms

from cluster.errors import DomainError
from planner import core
from planner.core.jobs import EngineChoice
from planner.core.execution import MAX_BYTES_PER_S
from planner.services import scenario_from_input

# The flags of ``plan rebalance`` a grid line may use, and the service keyword each fills.
SCENARIO_FLAGS = {"--add-spu": "add_spus", "--remove-spu": "remove_spus",
                  "--lose-rack": "lose_racks", "--replication": "replication", "--name": "name"}

ENGINES = [(EngineChoice.AUTO.value, "automatic (Spark past a size)"),
           (EngineChoice.LOCAL.value, "in-process"), (EngineChoice.SPARK.value, "Spark")]


def _items(text: str) -> list[str]:
    return [item for item in re.split(r"[,\s]+", text.strip()) if item]


class OptionsForm(forms.Form):
    anti_affinity = forms.BooleanField(required=False, initial=True,
                                       help_text="No two replicas of a partition in one rack.")
    leader_balance = forms.BooleanField(required=False, initial=True,
                                        help_text="Spread leaders evenly over the SPUs.")
    order_optimisation = forms.BooleanField(required=False, initial=True,
                                            label="Replica-order optimisation",
                                            help_text="Spread each SPU's failover targets.")
    engine = forms.ChoiceField(choices=ENGINES, initial=EngineChoice.AUTO.value)

    def options(self) -> core.Options:
        data = self.cleaned_data
        return core.Options(anti_affinity=data["anti_affinity"],
                            balance_leaders=data["leader_balance"],
                            optimise_order=data["order_optimisation"])


class PlanForm(OptionsForm):
    # Field names match the service's, so its refusals land next to the right field.
    add_spu = forms.CharField(label="Add SPUs", required=False, max_length=2000,
                              help_text="ID:RACK, comma-separated (12:rack-a, 13:rack-b).")
    remove_spu = forms.CharField(label="Decommission SPUs", required=False, max_length=2000,
                                 help_text="SPU ids, comma-separated.")
    lose_rack = forms.MultipleChoiceField(label="Lose racks", required=False,
                                          widget=forms.CheckboxSelectMultiple)
    replication = forms.CharField(label="Replication changes", required=False, max_length=2000,
                                  help_text="TOPIC:RF, comma-separated (orders:3).")
    name = forms.CharField(required=False, max_length=200,
                           help_text="Optional; made from the scenario when empty.")
    field_order = ["add_spu", "remove_spu", "lose_rack", "replication", "name"]

    def __init__(self, *args: Any, racks: list[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["lose_rack"].choices = [(r, r) for r in racks]

    def clean_add_spu(self) -> list[str]:
        return _checked(_items(self.cleaned_data["add_spu"]), additions_problem)

    def clean_replication(self) -> list[str]:
        return _checked(_items(self.cleaned_data["replication"]), changes_problem)

    def clean_remove_spu(self) -> list[int]:
        items = _items(self.cleaned_data["remove_spu"])
        bad = [i for i in items if not i.isdigit()]
        if bad:
            raise forms.ValidationError(f"{bad[0]!r} is not an SPU id (a whole number).")
        return [int(i) for i in items]


def _checked(items: list[str], problem: Callable[[list[str]], str | None]) -> list[str]:
    reason = problem(items)
    if reason:
        raise forms.ValidationError(reason)
    return items


def additions_problem(items: list[str]) -> str | None:
    """``ID:RACK`` items naming one SPU twice (the service would say it already exists)."""
    seen: dict[str, str] = {}
    for item in items:
        spu_id = item.partition(":")[0]
        if spu_id in seen:
            return f"SPU {spu_id} is listed twice ({seen[spu_id]}, {item}): add each SPU once."
        seen[spu_id] = item
    return None


def changes_problem(items: list[str]) -> str | None:
    """``TOPIC:FACTOR`` items whose factor is not a replication factor, or a topic twice."""
    seen: set[str] = set()
    for item in items:
        topic, colon, factor = item.rpartition(":")
        if not colon or not topic:
            continue  # the service says what the shape must be
        if not factor.isdigit():
            return f"{item}: the factor {factor!r} is not a whole number."
        if int(factor) < 1:
            return (f"{item}: the factor {int(factor)} is too small: a topic needs a "
                    f"replication factor of at least 1.")
        if topic in seen:
            return f"topic {topic} is listed twice: give one factor per topic."
        seen.add(topic)
    return None


class GridForm(OptionsForm):
    scenarios = forms.CharField(
        label="Your scenarios", required=False, max_length=20_000, widget=forms.Textarea(
            attrs={"rows": 4, "placeholder": "--add-spu 12:rack-a --add-spu 13:rack-b\n"
                                             "--remove-spu 4 --name drain-4"}),
        help_text="One per line, with the flags of plan rebalance.")
    standard = forms.BooleanField(label="Include the standard grid", required=False,
                                  initial=True, help_text="Every single-SPU removal, every "
                                                          "rack loss, and adding SPUs.")
    up_to = forms.IntegerField(label="Add up to", min_value=0, max_value=10, initial=3,
                               help_text="SPUs added to each rack in the standard grid, 1..N.")
    field_order = ["scenarios", "standard", "up_to"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Both forms share the option fields: ids of their own, so a label here never
        # toggles the what-if form's box (the posted names stay as they are).
        kwargs.setdefault("auto_id", "id_grid_%s")
        super().__init__(*args, **kwargs)

    def clean_scenarios(self) -> list[core.Scenario]:
        lines = [line for line in self.cleaned_data["scenarios"].splitlines() if line.strip()]
        return [_scenario_line(number, line) for number, line in enumerate(lines, 1)]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not data.get("scenarios") and not data.get("standard") and not self.errors:
            raise forms.ValidationError("Give scenarios, or include the standard grid.")
        return data


def _scenario_line(number: int, line: str) -> core.Scenario:
    """``--add-spu 12:rack-a --remove-spu 4`` as a Scenario; the reason names the line."""
    try:
        tokens = shlex.split(line)
    except ValueError as exc:
        raise forms.ValidationError(f"line {number}: {exc}") from None
    values: dict[str, list[str]] = {key: [] for key in SCENARIO_FLAGS.values()}
    for flag, value in zip(tokens[::2], tokens[1::2] + [None] * (len(tokens) % 2)):
        if flag not in SCENARIO_FLAGS or value is None:
            raise forms.ValidationError(f"line {number}: expected a flag of plan rebalance "
                                        f"followed by its value, not {flag!r}")
        values[SCENARIO_FLAGS[flag]].append(value)
    if any(not v.isdigit() for v in values["remove_spus"]):
        raise forms.ValidationError(f"line {number}: --remove-spu takes an SPU id")
    reason = additions_problem(values["add_spus"]) or changes_problem(values["replication"])
    if reason:
        raise forms.ValidationError(f"line {number}: {reason}")
    try:
        return scenario_from_input(**{**values, "name": " ".join(values["name"]),
                                      "remove_spus": [int(v) for v in values["remove_spus"]]})
    except DomainError as exc:
        raise forms.ValidationError(f"line {number}: {exc.message}") from None


class PlanApplyForm(forms.Form):
    """Cruise Control's throttles, and a confirmation: applying moves real replicas."""
    max_moves_per_spu = forms.IntegerField(label="Moves per SPU at once", min_value=1,
                                           max_value=1000, initial=5)
    max_moves = forms.IntegerField(label="Moves in flight at most", min_value=1,
                                   max_value=100_000, initial=50)
    throttle_bytes_per_s = forms.IntegerField(
        label="Bytes per second at most", required=False, min_value=1,
        max_value=MAX_BYTES_PER_S, help_text="Kafka's --throttle: the copies start no faster "
                                             "than this. Empty: no byte throttle.")
    confirm = forms.BooleanField(label="I want to move these replicas now",
                                 error_messages={"required": "Tick the box to confirm."})


class PlanThrottleForm(forms.Form):
    """A running plan's throttles, changed in place: the executor uses them at its next
    step. Field names match the service's, so its refusals land next to the right field."""
    max_moves_per_spu = forms.IntegerField(label="Moves per SPU at once", min_value=1,
                                           max_value=1000)
    max_moves = forms.IntegerField(label="Moves in flight at most", min_value=1,
                                   max_value=100_000)
    throttle_bytes_per_s = forms.IntegerField(
        label="Bytes per second at most", required=False, min_value=1,
        max_value=MAX_BYTES_PER_S, help_text="Empty: no byte throttle.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "id_throttle_%s")  # apart from the apply form's ids
        super().__init__(*args, **kwargs)


class DrainForm(PlanApplyForm):
    """The drain's preview, applied: ``expect`` names the moves the operator read."""
    expect = forms.CharField(widget=forms.HiddenInput, max_length=64)
    field_order = ["max_moves_per_spu", "max_moves", "throttle_bytes_per_s", "confirm"]

