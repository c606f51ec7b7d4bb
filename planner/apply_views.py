"""Pages that carry plans out: apply (with the throttles), pause, resume, cancel, a change of
a running plan's throttles, the drain's
preview, the SPUs a plan adds, its rollback file and its rest.

Every POST answers a redirect (post/redirect/get): a refusal is a message on the
plan's page, so a reload never posts again. Only a form with a bad field is
rendered again, with the reason next to the field.
"""
from __future__ import annotations

import json
from typing import Any, Callable

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from cluster.errors import DomainError, InvalidInput
from cluster.views._shell import call_action, call_service, operator_required
from planner import execution
from planner.drain import drain_preview, spu_drain
from planner.follow_up import plan_online_spus, plan_register_spus, plan_rest, plan_rollback
from planner.forms import DrainForm, PlanApplyForm, PlanThrottleForm
from planner.models import Plan
from planner.views import plan_detail


def to_apply(plan_id: int) -> HttpResponse:
    return redirect(reverse("planner:plan", kwargs={"plan_id": plan_id}) + "#apply")


def _throttles(form: PlanApplyForm) -> dict[str, Any]:
    data = form.cleaned_data
    return {"max_moves_per_spu": data["max_moves_per_spu"], "max_moves": data["max_moves"],
            "throttle_bytes_per_s": data["throttle_bytes_per_s"]}


def _field_problem(outcome: Any) -> bool:
    """A refusal that names one of the form's fields is shown there; the rest are messages."""
    error = outcome.error
    return isinstance(error, InvalidInput) and error.field in PlanApplyForm.base_fields


@require_POST
@operator_required
def plan_apply_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    form = PlanApplyForm(request.POST)
    if not form.is_valid():
        return plan_detail(request, plan_id, apply_form=form)
    outcome = call_service(form, execution.plan_apply, plan_id=plan_id, by=request.user,
                           **_throttles(form))
    if outcome.ok:
        messages.success(request, f"Plan {plan_id} is being carried out: "
                                  f"{outcome.value.moves_total} moves.")
    elif _field_problem(outcome):
        return plan_detail(request, plan_id, apply_form=form)
    else:  # another tab applied it, another plan runs, the cluster changed: say so, then GET
        messages.error(request, outcome.error.message)
    return to_apply(plan_id)


def _act(request: HttpRequest, service: Callable[..., Any], plan_id: int,
         done: str) -> HttpResponse:
    refusal = call_action(request, service, f"Plan {plan_id} {done}.", plan_id=plan_id)
    if refusal:
        messages.error(request, refusal)
    return to_apply(plan_id)


def _control_view(service: Callable[..., Any], done: str) -> Callable[..., HttpResponse]:
    @require_POST
    @operator_required
    def view(request: HttpRequest, plan_id: int) -> HttpResponse:
        return _act(request, service, plan_id, done)
    return view


@require_POST
@operator_required
def plan_throttle_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    """Bad values are shown next to their field; a plan no longer under way, as a message."""
    form = PlanThrottleForm(request.POST)
    if not form.is_valid():
        return plan_detail(request, plan_id, throttle_form=form)
    outcome = call_service(form, execution.plan_throttle, plan_id=plan_id, by=request.user,
                           **form.cleaned_data)
    if outcome.ok:
        messages.success(request, f"Plan {plan_id}'s throttle changed: the next moves start "
                                  "under it.")
    elif isinstance(outcome.error, InvalidInput) and \
            outcome.error.field in PlanThrottleForm.base_fields:
        return plan_detail(request, plan_id, throttle_form=form)
    else:
        messages.error(request, outcome.error.message)
    return to_apply(plan_id)


plan_cancel_view = _control_view(execution.plan_stop, "cancelled")
plan_pause_view = _control_view(execution.plan_pause, "paused")
plan_resume_view = _control_view(execution.plan_resume, "resumed")


@require_POST
@operator_required
def plan_register_spus_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    return _spu_step(request, plan_id, plan_register_spus, lambda ids, them: (
        f"Registered SPU {ids}: bring {them} online next."))


@require_POST
@operator_required
def plan_online_spus_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    return _spu_step(request, plan_id, plan_online_spus,
                     lambda ids, _: f"SPU {ids} online: the plan can be applied.")


def _spu_step(request: HttpRequest, plan_id: int, service, said) -> HttpResponse:
    """One step of a plan that adds SPUs (register, bring online), said as a message."""
    try:
        ids = service(plan_id=plan_id, by=request.user)
        messages.success(request, said(", ".join(map(str, ids)),
                                       "them" if len(ids) > 1 else "it"))
    except DomainError as exc:
        messages.error(request, exc.message)
    return to_apply(plan_id)


@require_POST
@operator_required
def plan_rest_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    try:
        rest = plan_rest(plan_id=plan_id, by=request.user)
    except DomainError as exc:
        messages.error(request, exc.message)
        return to_apply(plan_id)
    messages.success(request, f"Plan {rest.pk} plans the rest of plan {plan_id} from the "
                              "cluster as it is now: read it, then apply it.")
    return redirect("planner:plan", plan_id=rest.pk)


def plan_rollback_json(request: HttpRequest, plan_id: int) -> HttpResponse:
    """Today's assignment of the partitions the plan moves: keep it to undo the plan."""
    record = get_object_or_404(Plan.objects.exclude(target={}), pk=plan_id)
    response = HttpResponse(json.dumps(plan_rollback(record), indent=2),
                            content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="plan-{plan_id}-rollback.json"'
    return response


def spu_drain_view(request: HttpRequest, spu_id: int) -> HttpResponse:
    """GET: the drain's dry run, every move listed, nothing stored. POST with the form:
    store the drain and apply it with the throttles chosen (a bare POST shows the preview)."""
    if request.method == "POST":
        return _drain_post(request, spu_id)
    return _drain_page(request, spu_id, None)


def _drain_page(request: HttpRequest, spu_id: int, form: DrainForm | None,
                status: int = 200) -> HttpResponse:
    try:
        preview = drain_preview(spu_id=spu_id)
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("cluster:spus")
    if form is None:
        form = DrainForm(initial={"expect": preview["fingerprint"]})
    return render(request, "planner/drain.html", {"spu_id": spu_id, "preview": preview,
                                                   "form": form}, status=status)


@operator_required
def _drain_post(request: HttpRequest, spu_id: int) -> HttpResponse:
    if "max_moves" not in request.POST:  # the SPU row's button: to the preview first
        return redirect("planner:spu-drain", spu_id=spu_id)
    form = DrainForm(request.POST)
    if not form.is_valid():
        return _drain_page(request, spu_id, form, status=400)
    outcome = call_service(form, spu_drain, spu_id=spu_id, expect=form.cleaned_data["expect"],
                           by=request.user, **_throttles(form))
    if not outcome.ok:
        if _field_problem(outcome):
            return _drain_page(request, spu_id, form, status=400)
        messages.error(request, outcome.error.message)
        return redirect("planner:spu-drain", spu_id=spu_id)
    messages.success(request, f"Draining SPU {spu_id}: {outcome.value.moves_total} moves.")
    return to_apply(outcome.value.plan_id)
