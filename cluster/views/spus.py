"""SPUs and SPU groups: list with skew, register / unregister, group create / scale / delete."""
from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from cluster.forms import SpuGroupCreateForm, SpuGroupScaleForm, SpuRegisterForm
from cluster.selectors.filters import spu_groups_with_spus
from cluster.selectors.stats import cluster_stats
from cluster.services import spg_create, spg_delete, spg_scale, spu_register, spu_unregister
from cluster.views._shell import call_action, call_service, operator_required
from cluster.views.live import rendered_seqs
from cluster.views.tables import racks_down, spu_row


def spu_list(request: HttpRequest, **forms_in_error: Any) -> HttpResponse:
    seqs = rendered_seqs()  # before the data: a change after it is resynced on connect
    stats = cluster_stats()
    spus = list(stats.spus.values())
    resolution, rack = request.GET.get("resolution", ""), request.GET.get("rack", "")
    shown = stats.spus_where(resolution=resolution, rack=rack)
    context: dict[str, Any] = {
        "rows": [spu_row(s) for s in shown], "total": len(spus),
        "even": {"leaders": spus[0].leader_range, "replicas": spus[0].replica_range}
        if spus else None,
        "resolution": resolution, "rack": rack,
        "racks": sorted({s.rack for s in spus if s.rack}), "racks_down": racks_down(spus),
        "groups": spu_groups_with_spus(),
        "register_form": SpuRegisterForm(), "group_form": SpuGroupCreateForm(),
        "action_error": None, "live_seqs": seqs, **forms_in_error}
    status = 400 if forms_in_error else 200
    return render(request, "cluster/spus.html", context, status=status)


@require_POST
@operator_required
def spu_register_view(request: HttpRequest) -> HttpResponse:
    form = SpuRegisterForm(request.POST)
    if form.is_valid() and call_service(form, spu_register, spu_id=form.cleaned_data["id"],
                                        rack=form.cleaned_data["rack"],
                                        public=form.cleaned_data["public"],
                                        private=form.cleaned_data["private"],
                                        by=request.user).ok:
        messages.success(request, f"SPU {form.cleaned_data['id']} registered.")
        return redirect("cluster:spus")
    return spu_list(request, register_form=form)


@require_POST
@operator_required
def spu_unregister_view(request: HttpRequest, spu_id: int) -> HttpResponse:
    error = call_action(request, spu_unregister, f"SPU {spu_id} unregistered.", spu_id=spu_id)
    return redirect("cluster:spus") if error is None else spu_list(request, action_error=error)


@require_POST
@operator_required
def spg_create_view(request: HttpRequest) -> HttpResponse:
    form = SpuGroupCreateForm(request.POST)
    if form.is_valid() and call_service(form, spg_create, by=request.user,
                                        **form.cleaned_data).ok:
        messages.success(request, f"SPU group {form.cleaned_data['name']} created.")
        return redirect("cluster:spus")
    return spu_list(request, group_form=form)


@require_POST
@operator_required
def spg_scale_view(request: HttpRequest, name: str) -> HttpResponse:
    form = SpuGroupScaleForm(request.POST)
    action_error = None
    if form.is_valid():
        outcome = call_service(form, spg_scale, name=name, by=request.user,
                               replicas=form.cleaned_data["replicas"])
        if outcome.ok:
            messages.success(request, f"SPU group {name} scaled to "
                                      f"{form.cleaned_data['replicas']} SPUs.")
            return redirect("cluster:spus")
        # A missing group has no row to show the error in; say it at the top.
        if outcome.error is not None and outcome.error.status == 404:
            action_error = outcome.error.message
    return spu_list(request, scale_form=form, scale_group=name, action_error=action_error)


@require_POST
@operator_required
def spg_delete_view(request: HttpRequest, name: str) -> HttpResponse:
    error = call_action(request, spg_delete, f"SPU group {name} deleted with its SPUs.",
                        name=name)
    return redirect("cluster:spus") if error is None else spu_list(request, action_error=error)
