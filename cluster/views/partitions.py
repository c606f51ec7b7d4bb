"""Partitions across topics, filterable by the health reasons that link here."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from cluster.core.replication.state import Resolution as PartitionResolution
from cluster.live import CLUSTER_GROUP, block_group
from cluster.selectors.filters import partition_keys, partitions_by_ids, partitions_filtered
from cluster.selectors.stats import down_spu_ids
from cluster.views._shell import paginate, query_without_page
from cluster.views.live import rendered_seqs

PER_PAGE = 100


def _flag(request: HttpRequest, name: str) -> bool:
    return request.GET.get(name, "") in {"1", "true", "on"}


def _int_or_none(raw: str) -> int | None:
    return int(raw) if raw.isdigit() else None


def partition_list(request: HttpRequest) -> HttpResponse:
    filters = {"topic": request.GET.get("topic", "").strip(),
               "spu": _int_or_none(request.GET.get("spu", "")),
               "leaderless": _flag(request, "leaderless"),
               "under_replicated": _flag(request, "under_replicated"),
               "resolution": request.GET.get("resolution", "")}
    page = paginate(request, partitions_filtered(**filters), PER_PAGE)
    ids = list(page.object_list)
    # The rows' blocks carry their HW/LEO; their sequences are read before the rows.
    blocks = list(dict.fromkeys(block_group(*key) for key in partition_keys(ids)))
    seqs = rendered_seqs(CLUSTER_GROUP, *blocks)
    return render(request, "cluster/partitions.html", {
        "page": page, "partitions": partitions_by_ids(ids), "down_spus": down_spu_ids(),
        "live_groups": ",".join(blocks), "live_seqs": seqs,
        "filters": filters, "filtered": any(filters.values()),
        "query": query_without_page(request),
        "resolutions": [r.value for r in PartitionResolution]})
