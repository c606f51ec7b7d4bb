"""Topics: list, detail, create with a dry-run preview, upload a replica assignment file."""
from __future__ import annotations

import json
from typing import Any

import redis
from django.contrib import messages
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from cluster.core.manual_assignment import (InvalidReplicaMap, cluster_problems,
                                            parse_assignment, to_file)
from cluster.core.replication import (INVALID_REQUEST, NOT_ENOUGH_REPLICAS,
                                      NOT_ENOUGH_REPLICAS_AFTER_APPEND)
from cluster.core.topic_controller import TopicResolution
from cluster.errors import DomainError
from cluster.forms import AssignmentUploadForm, ProduceForm, TopicCreateForm
from cluster.live import BLOCK, MAX_BLOCKS, block_groups, topic_group
from cluster.models import Spu, Topic
from cluster.selectors.hot_offsets import hot_offsets
from cluster.selectors.filters import NOT_PROVISIONED, topics_filtered
from cluster.selectors.stats import down_spu_ids, topic_spu_counts, topic_stats_for
from cluster.services import TopicOutcome, topic_create, topic_delete
from cluster.services.records import ProduceOutcome, records_consume, records_produce_and_wait
from cluster.views._shell import (Outcome, call_action, call_service, operator_required,
                                  paginate, problem_rows, query_without_page)
from cluster.views.live import rendered_seqs
from cluster.views.tables import map_table, share_cell

PAGE_SIZES = {"50": 50, "200": 200, "all": 5000}
RESOLUTIONS = [r.value for r in TopicResolution]
# Rows listed before "show all": a 1,000-partition topic stays quick to open.
DETAIL_ROWS = 200
# Rows of a previewed map rendered as HTML; the page shows the rest a page at a time.
PREVIEW_ROWS = 200
# Problems of an uploaded file listed one by one; the rest are counted by rule.
PROBLEMS_SHOWN = 200
# The records panel shows the newest few; the API reads any range.
RECORDS_SHOWN = 20
# Refusals that are about the acks level go next to the acks field, the rest next to partition.
ACKS_CODES = {NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND}


def topic_list(request: HttpRequest) -> HttpResponse:
    seqs = rendered_seqs()  # before the data: a change after it is resynced on connect
    search, resolution = request.GET.get("q", "").strip(), request.GET.get("resolution", "")
    per_page = PAGE_SIZES.get(request.GET.get("per_page", ""), 200)
    # The maps stay in the database: a page of 200 topics decoded each topic's whole map.
    topics = (topics_filtered(search, resolution).defer("replica_map", "manual_replica_map")
              .annotate(manual=Q(manual_replica_map__isnull=False)))
    page = paginate(request, topics, per_page)
    stats = topic_stats_for([t.id for t in page.object_list])
    rows = [{"topic": t, "stats": stats.get(t.id), "manual": t.manual,
             "preferred": share_cell(stats[t.id].preferred_share if t.id in stats else None)}
            for t in page.object_list]
    return render(request, "cluster/topics.html", {
        "page": page, "rows": rows, "q": search, "resolution": resolution,
        "resolutions": RESOLUTIONS, "not_provisioned": NOT_PROVISIONED,
        "query": query_without_page(request), "filtered": bool(search or resolution),
        "live_seqs": seqs})


def topic_detail(request: HttpRequest, name: str,
                 produce_form: ProduceForm | None = None) -> HttpResponse:
    limit = None if request.GET.get("all") == "1" else DETAIL_ROWS
    # Before the data: the groups the page's socket joins (cluster/consumers.py groups_for).
    seqs = rendered_seqs(topic_group(name), *block_groups(name, 0, limit or BLOCK * MAX_BLOCKS))
    # The map is read only when the page lists all of it: the rows listed carry their
    # replicas, the kept counts the totals (a 100,000-entry map took most of the page).
    topic = get_object_or_404(Topic.objects.defer("replica_map"), name=name)
    partitions = list(topic.partition_set.order_by("index")[:limit])
    stats = topic_stats_for([topic.id]).get(topic.id)
    counts = topic_spu_counts(topic.id)
    whole = limit is None or topic.partitions <= limit
    listed = topic.replica_map if whole else [p.replicas for p in partitions]
    form = produce_form or ProduceForm(partitions=topic.partitions,
                                       initial={"partition": _records_partition(request, topic)})
    return render(request, "cluster/topic_detail.html", {
        "topic": topic, "partitions": partitions, "stats": stats,
        "truncated": limit is not None and topic.partitions > limit, "limit": limit,
        "preferred": share_cell(stats.preferred_share if stats else None),
        "table": map_table(listed, _racks(), max_rows=limit, counts=counts),
        "map_file": _file_text(topic.replica_map) if topic.partitions <= DETAIL_ROWS else None,
        "produce_form": form,
        "records": _records_panel(request, topic) if topic.partitions else None,
        "outage_spus": _hosting_spus(counts), "down_spus": down_spu_ids(), "live_seqs": seqs},
        status=400 if produce_form is not None else 200)


def _hosting_spus(counts: dict[int, tuple[int, int]]) -> list[dict[str, Any]]:
    ids = [spu for spu, (leaders, followers) in counts.items() if leaders + followers]
    return list(Spu.objects.filter(id__in=ids).order_by("id").values("id", "resolution"))


def _records_partition(request: HttpRequest, topic: Topic) -> int:
    try:
        # After a refused write the panel shows the partition the operator wrote to.
        index = int(request.GET.get("partition", request.POST.get("partition", 0)))
    except ValueError:
        return 0
    return index if 0 <= index < topic.partitions else 0


def _records_panel(request: HttpRequest, topic: Topic) -> dict[str, Any]:
    """The newest committed records of one partition (or uncommitted too, when asked)."""
    index = _records_partition(request, topic)
    uncommitted = request.GET.get("uncommitted") == "1"
    panel: dict[str, Any] = {"partition": index, "uncommitted": uncommitted, "rows": [],
                             "error": None, "shown": RECORDS_SHOWN}
    # The hot state's HW/LEO (the row's trail it by the mirror's interval), else the row's;
    # start a little before them and keep the newest.
    live = hot_offsets([(topic.name, index)]).get((topic.name, index))
    row = live._asdict() if live else topic.partition_set.filter(index=index).values(
        "hw", "leo").first()
    end = (row["leo"] if uncommitted else row["hw"]) if row else 0
    try:
        rows = records_consume(topic=topic.name, partition=index, uncommitted=uncommitted,
                               offset=max(0, end - RECORDS_SHOWN))
    except DomainError as exc:
        panel["error"] = exc.message
    except redis.RedisError:
        panel["error"] = "records are unavailable: the replication store (Redis) is not answering"
    else:
        panel["rows"] = rows[-RECORDS_SHOWN:][::-1]
    return panel


@require_POST
@operator_required
def topic_produce_view(request: HttpRequest, name: str) -> HttpResponse:
    topic = get_object_or_404(Topic, name=name)
    form = ProduceForm(request.POST, partitions=topic.partitions)
    if form.is_valid():
        outcome = call_service(form, records_produce_and_wait, topic=name,
                               **form.cleaned_data)
        if outcome.ok and outcome.value.ok:
            messages.success(request, _produced_text(outcome.value))
            url = reverse("cluster:topic", kwargs={"name": name})
            return redirect(f"{url}?partition={form.cleaned_data['partition']}#records")
        if outcome.ok:
            _refused(form, outcome.value)
    return topic_detail(request, name, produce_form=form)


def _refused(form: ProduceForm, outcome: ProduceOutcome) -> None:
    field = "acks" if outcome.code in ACKS_CODES else "partition"
    if outcome.code == INVALID_REQUEST:
        field = "count"
    state = "timed out" if outcome.state == "pending" else outcome.state
    form.add_error(field, f"Write {state}: {outcome.reason}"
                          + (f" ({outcome.code})" if outcome.code else ""))


def _produced_text(outcome: ProduceOutcome) -> str:
    first = outcome.base_offset or 0
    span = f"offset {first}" if outcome.count == 1 else \
        f"offsets {first}–{first + outcome.count - 1}"
    how = {"appended": "appended by the leader (acks=0: nobody waited)",
           "acknowledged": ("committed by the whole LRS" if outcome.acks == "all"
                            else "acknowledged by the leader")}[outcome.state]
    return (f"{outcome.count} record{'s' if outcome.count != 1 else ''} to "
            f"{outcome.topic}/{outcome.partition} at {span}: {how}.")


@require_POST
@operator_required
def topic_delete_view(request: HttpRequest, name: str) -> HttpResponse:
    error = call_action(request, topic_delete, f"Topic {name} deleted.", name=name)
    if error is not None:
        messages.error(request, error)
    return redirect("cluster:topics")


@operator_required
def topic_create_view(request: HttpRequest) -> HttpResponse:
    form = TopicCreateForm(request.POST or None)
    context: dict[str, Any] = {"form": form}
    if request.method == "POST" and form.is_valid():
        dry_run = request.POST.get("action") != "create"
        outcome = call_service(form, topic_create, **_create_args(form.cleaned_data),
                               dry_run=dry_run, by=request.user)
        if outcome.ok and not dry_run:
            return _created(request, outcome.value, form.cleaned_data.get("preview_start"))
        if outcome.ok:
            context.update(_preview_context(outcome.value))
            # Remember where the previewed map started, to tell on Create if it moved.
            form.data = form.data.copy()
            form.data["preview_start"] = outcome.value.start_index
    status = 400 if form.errors else 200
    return render(request, "cluster/topic_create.html", context, status=status)


def _create_args(data: dict[str, Any]) -> dict[str, Any]:
    return {"name": data["name"], "partitions": data["partitions"],
            "replication": data["replication"],
            "ignore_racks": data["ignore_rack_assignment"],
            "min_lrs": data["min_lrs"], "max_lag": data["max_lag"]}


def _created(request: HttpRequest, outcome: TopicOutcome,
             preview_start: int | None) -> HttpResponse:
    messages.success(request, f"Topic {outcome.name} created: {outcome.resolution}.")
    if outcome.warning:
        messages.warning(request, f"{outcome.warning}.")
    if preview_start is not None and outcome.start_index not in (None, preview_start):
        # Another topic was created between preview and Create: the chain moved.
        messages.warning(request, "Another topic was created after your preview, so the "
                                  "replica map starts at a later index than previewed.")
    return redirect("cluster:topic", name=outcome.name)


def _preview_context(outcome: TopicOutcome) -> dict[str, Any]:
    """The first rows as HTML; a longer map goes once as compact JSON that the page pages
    through and offers as a file (a 100,000-row table was 26 MB of HTML)."""
    rack_of = _racks()
    replica_map = outcome.replica_map or []
    paged = len(replica_map) > PREVIEW_ROWS
    return {"preview": outcome, "table": map_table(replica_map, rack_of, max_rows=PREVIEW_ROWS),
            "map_pages": {"rows": PREVIEW_ROWS, "map": replica_map, "name": outcome.name,
                          "rack_of": {str(s): r or "" for s, r in rack_of.items()}}
            if paged else None}


@operator_required
def topic_upload_view(request: HttpRequest) -> HttpResponse:
    form = AssignmentUploadForm(request.POST or None, request.FILES or None)
    context: dict[str, Any] = {"form": form}
    if request.method == "POST" and form.is_valid():
        dry_run = request.POST.get("action") != "create"
        outcome = _upload(form, dry_run, request)
        if outcome.ok and not dry_run:
            messages.success(request, f"Topic {outcome.value.name} created from the file.")
            if outcome.value.warning:
                messages.warning(request, f"{outcome.value.warning}.")
            return redirect("cluster:topic", name=outcome.value.name)
        context.update(_problem_context(outcome.problems))
        if outcome.ok:
            context.update(_preview_context(outcome.value))
    status = 400 if form.errors else 200
    return render(request, "cluster/topic_upload.html", context, status=status)


def _problem_context(problems: list[dict[str, Any]] | None) -> dict[str, Any]:
    problems = problems or []
    by_rule: dict[str, int] = {}
    for p in problems:
        by_rule[p["rule"]] = by_rule.get(p["rule"], 0) + 1
    return {"problems": problems[:PROBLEMS_SHOWN], "problem_count": len(problems),
            "problem_rules": sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0])),
            "problems_hidden": max(0, len(problems) - PROBLEMS_SHOWN)}


def _upload(form: AssignmentUploadForm, dry_run: bool, request: HttpRequest) -> Outcome:
    try:
        data = form.content()
    except DomainError as exc:
        return _listed(form, Outcome(error=exc, problems=problem_rows(exc)))
    outcome = call_service(form, topic_create, name=form.cleaned_data["name"],
                           replica_assignment=data, dry_run=dry_run, by=request.user)
    if outcome.error is not None:
        outcome.problems = _every_problem(outcome.problems, data)
    return _listed(form, outcome)


def _listed(form: AssignmentUploadForm, outcome: Outcome) -> Outcome:
    """Each problem is listed once, in the table; the file field only points there."""
    if outcome.problems:
        count = len(outcome.problems)
        form.errors["file"] = form.error_class([
            f"The file breaks {count} rule{'s' if count != 1 else ''}: see the list."])
    return outcome


def _every_problem(problems: list[dict[str, object]], data: object) -> list[dict[str, object]]:
    """The file's own problems and the cluster's (SPUs that are not registered, a
    replica count the cluster cannot hold) in one list, so one pass fixes the file."""
    try:
        replica_map = parse_assignment(data)
    except InvalidReplicaMap:
        replica_map = _readable_replicas(data)
    found = [p.as_dict() for p in cluster_problems(replica_map, _racks().keys())]
    listed = {(p["partition"], p["rule"]) for p in problems}
    merged = problems + [p for p in found if (p["partition"], p["rule"]) not in listed]
    return sorted(merged, key=lambda p: (p["partition"] is not None, p["partition"] or 0))


def _readable_replicas(data: object) -> list[list[int]]:
    """Per entry, the replica ids that are SPU ids at all, from a file that breaks other rules."""
    entries = data.get("partitions") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        return []
    return [[r for r in e["replicas"] if type(r) is int and r >= 0]
            if isinstance(e, dict) and isinstance(e.get("replicas"), list) else []
            for e in entries]


def _racks() -> dict[int, str]:
    return dict(Spu.objects.values_list("id", "rack"))


def topic_assignment_file(request: HttpRequest, name: str) -> HttpResponse:
    """The topic's replica map as a file to save, for maps too long to show inline."""
    topic = get_object_or_404(Topic, name=name)
    response = HttpResponse(_file_text(topic.replica_map), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{name}-assignment.json"'
    return response


def _file_text(replica_map: list[list[int]]) -> str:
    """The object shape of 000, one partition per line so it diffs and edits well."""
    lines = [json.dumps(entry) for entry in to_file(replica_map)["partitions"]]
    return '{"partitions": [\n  ' + ",\n  ".join(lines) + "\n]}"
