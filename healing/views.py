"""``/healing/``: the open anomalies (refreshed live), their history, the switches and
thresholds. Viewers read; operators switch and set (same services as the API and CLI)."""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from cluster.views._shell import call_service, operator_required
from healing import core
from healing.forms import ModeForm, SettingForm
from healing.selectors import anomaly_history, healing_status
from healing.services import healing_disable, healing_enable, healing_set
from healing.setting_rows import setting_rows

# Closed anomalies the History table shows; healing.js keeps as many as rows move in live.
HISTORY_SHOWN = 50


def healing_page(request: HttpRequest, setting_form: SettingForm | None = None,
                 status: int = 200) -> HttpResponse:
    state = healing_status()
    return render(request, "healing/healing.html", {
        "status": state, "history": anomaly_history(HISTORY_SHOWN),
        "history_shown": HISTORY_SHOWN, "modes": [m.value for m in core.Mode],
        "settings": setting_rows(state["settings"], setting_form),
        "setting_form": setting_form or SettingForm()}, status=status)


@require_POST
@operator_required
def healing_mode_view(request: HttpRequest) -> HttpResponse:
    form = ModeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "mode must be off, notify-only or heal")
        return redirect("healing:healing")
    mode = core.Mode(form.cleaned_data["mode"])
    if mode is core.Mode.OFF:
        healing_disable(by=request.user)
    else:
        healing_enable(notify_only=mode is core.Mode.NOTIFY_ONLY, by=request.user)
    messages.success(request, f"self-healing is {mode.value}")
    return redirect("healing:healing")


@require_POST
@operator_required
def healing_setting_view(request: HttpRequest) -> HttpResponse:
    form = SettingForm(request.POST)
    if not form.is_valid():
        return healing_page(request, setting_form=form, status=400)
    data = form.cleaned_data
    if not call_service(form, healing_set, name=data["name"], value=data["value"],
                        by=request.user).ok:
        return healing_page(request, setting_form=form, status=400)
    messages.success(request, f"{data['name']} set to {data['value']}")
    return redirect("healing:healing")
