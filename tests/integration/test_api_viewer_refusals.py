"""Every mutating API operation in the schema refuses a viewer, and changes nothing."""
import re

import pytest
from rest_framework.test import APIClient

from tests.helpers import store_counts

MUTATING = {"post", "put", "patch", "delete"}
SAMPLE_PATH_VALUES = {"spu_id": "0", "name": "orders", "rack": "rack-a", "plan_id": "1",
                      "grid_id": "1", "username": "viewer"}


def _mutating_operations() -> list[tuple[str, str]]:
    from drf_spectacular.generators import SchemaGenerator

    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    return [(method, path) for path, ops in paths.items() for method in ops
            if method in MUTATING and not path.endswith("/token/")]


def _concrete(path: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: SAMPLE_PATH_VALUES[m.group(1)], path)


@pytest.mark.django_db
def test_every_mutating_operation_refuses_a_viewer(viewer, seed_rack_cluster, redis_url):
    from cluster.services import spg_create, topic_create

    topic_create(name="orders", partitions=2, replication=2)
    spg_create(name="orders", replicas=1, min_id=100)
    client = APIClient()
    client.force_authenticate(viewer)
    operations = _mutating_operations()
    assert len(operations) >= 12
    assert {("post", "/api/plans/"), ("post", "/api/plans/{plan_id}/cancel/"),
            ("post", "/api/plans/grids/")} <= set(operations)
    before = store_counts()
    plans_before = _plan_counts()
    answers = {(m, p): getattr(client, m)(_concrete(p), {}, format="json").status_code
               for m, p in operations}
    assert {op: code for op, code in answers.items() if code != 403} == {}
    assert store_counts() == before
    assert _plan_counts() == plans_before


def _plan_counts() -> tuple[int, int]:
    from planner.models import Plan, PlanGrid

    return Plan.objects.count(), PlanGrid.objects.count()
