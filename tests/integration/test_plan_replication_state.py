"""`plan rebalance` reads actual leaders and partition sizes from the store."""
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import override_settings

from cluster.models import Partition
from cluster.services import topic_create

pytestmark = pytest.mark.django_db


def run(*args: str) -> dict:
    out = StringIO()
    call_command(*args, "--json", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


@pytest.fixture
def piled_up(seed_rack_cluster):
    """24 partitions over 12 SPUs; after outages SPU 0 leads all it holds."""
    topic_create(name="orders", partitions=24, replication=3)
    for row in Partition.objects.all():
        row.leader = 0 if 0 in row.replicas else row.replicas[0]
        row.hw = row.leo = 10 * (row.index + 1)
        row.save()


def test_before_figures_count_the_actual_leaders(piled_up):
    held = leaders_per_spu()
    data = run("plan", "rebalance")
    assert data["metrics"]["before"]["leader_spread"] == max(held.values()) - min(held.values())
    assert data["metrics"]["before"]["leader_spread"] > 1
    assert data["metrics"]["leader_spread"] <= 1


@override_settings(PLANNER_BYTES_PER_RECORD=100, REPLICATION_LOG_RETENTION=0)
def test_bytes_moved_is_records_times_bytes_per_record(piled_up):
    data = run("plan", "rebalance", "--remove-spu", "5")
    sizes = {p.index: p.leo * 100 for p in Partition.objects.all()}
    expected = sum(len(m["added"]) * sizes[m["partition"]] for m in data["moves"])
    assert data["metrics"]["bytes_moved"] == expected > 0


@override_settings(PLANNER_BYTES_PER_RECORD=1, REPLICATION_LOG_RETENTION=5)
def test_sizes_count_retained_records_only(piled_up):
    from planner.services import cluster_from_store

    # HW = LEO = 10 (p + 1), five kept under HW: every partition holds 5 records.
    assert set(cluster_from_store().topic("orders").sizes) == {5}


def leaders_per_spu():
    from collections import Counter

    counts = Counter(p.leader for p in Partition.objects.all())
    return Counter({spu: counts.get(spu, 0) for spu in range(12)})
