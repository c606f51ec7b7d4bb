"""The import page: upload Kafka's tool outputs, read what was imported (and every
warning), plan the snapshot by bytes. The same services as ``cluster import`` and
``plan rebalance --balance bytes``; refusals show next to the file or field they concern."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from cluster.errors import DomainError
from cluster.views._shell import operator_required
from planner.bytes_plans import plan_create_bytes
from planner.core import Options, Scenario
from planner.core.bytes_balance import ByteOptions
from planner.import_forms import BytePlanForm, ImportForm
from planner.imports import import_cluster
from planner.models import ClusterImport

FIELDS = ("describe", "log_dirs", "brokers")


def imports(request: HttpRequest, form: ImportForm | None = None,
            status: int = 200) -> HttpResponse:
    return render(request, "planner/imports.html", {
        "form": form or ImportForm(),
        "imports": ClusterImport.objects.defer("current")[:20]}, status=status)


@require_POST
@operator_required
def import_create_view(request: HttpRequest) -> HttpResponse:
    form = ImportForm(request.POST, request.FILES)
    texts = form.texts() if form.is_valid() else {}
    if not form.is_valid() or not texts:
        return imports(request, form, status=400)
    describe, log_dirs, brokers = (texts.get(f) for f in FIELDS)
    if describe is None:
        return imports(request, form, status=400)
    try:
        outcome = import_cluster(
            describe=describe[1], log_dirs=log_dirs[1] if log_dirs else None,
            brokers=brokers[1] if brokers else None,
            names=(describe[0], log_dirs[0] if log_dirs else "", brokers[0] if brokers else ""),
            plan_only=form.cleaned_data["plan_only"], by=request.user)
    except DomainError as exc:
        form.add_error(_field_of(exc, texts), exc.message)
        return imports(request, form, status=400)
    return redirect("planner:import", import_id=outcome.record.pk)


def _field_of(exc: DomainError, texts: dict) -> str | None:
    """The upload a parse error names (its file name), else the form as a whole."""
    source = exc.details.get("file") if isinstance(exc.details, dict) else None
    for field in FIELDS:
        if texts.get(field) and texts[field][0] == source:
            return field
    return None


def import_detail(request: HttpRequest, import_id: int,
                  form: BytePlanForm | None = None, status: int = 200) -> HttpResponse:
    record = get_object_or_404(ClusterImport, pk=import_id)
    topics = record.current.get("topics", [])
    return render(request, "planner/import.html", {
        "record": record, "form": form or BytePlanForm(),
        "spus": record.current.get("spus", []),
        "topic_count": len(topics),
        "partition_count": sum(len(t["partitions"]) for t in topics),
        "sized": any(t.get("sizes") for t in topics)}, status=status)


@require_POST
@operator_required
def import_plan_view(request: HttpRequest, import_id: int) -> HttpResponse:
    record = get_object_or_404(ClusterImport, pk=import_id)
    form = BytePlanForm(request.POST)
    if not form.is_valid():
        return import_detail(request, record.pk, form, status=400)
    data = form.cleaned_data
    opts = ByteOptions(max_disk_percent=data["max_disk_percent"],
                       topics=form.names(data["topics"]),
                       exclude_topics=form.names(data["exclude_topics"]) or frozenset(),
                       leaders_only=data["leaders_only"])
    try:
        plan = plan_create_bytes(scenario=Scenario(), options=Options(), opts=opts,
                                 throttle=data["throttle_bytes_per_s"],
                                 max_moves_per_spu=data["max_moves_per_spu"],
                                 snapshot_id=None if record.stored else record.pk,
                                 by=request.user)
    except DomainError as exc:
        field = exc.field if exc.field in form.fields else None
        form.add_error(field, exc.message)
        return import_detail(request, record.pk, form, status=400)
    return redirect("planner:plan", plan_id=plan.pk)


def cost_context(metrics: dict) -> dict:
    """What the plan page's cost and risk section reads (planner/_cost.html)."""
    cost = metrics.get("cost") or {}
    risk = cost.get("risk") or {}
    after = {r["rack"]: r for r in risk.get("after", {}).get("racks", [])}
    return {"cost": cost,
            "risk_racks": [(r, after.get(r["rack"], {}))
                           for r in risk.get("before", {}).get("racks", [])]}
