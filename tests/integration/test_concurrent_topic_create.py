"""Two topics created at once get distinct, consecutive start indexes."""
import threading

import pytest
from django.db import connection

from cluster.models import ClusterState, Topic
from cluster.services import topic_create
from tests.helpers import register_spus


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("partitions", [[3, 5], [4, 4, 4, 4]])
def test_concurrent_creations_never_share_a_start_index(partitions):
    register_spus(*range(5))
    barrier = threading.Barrier(len(partitions))
    errors: list[BaseException] = []

    def create(name: str, count: int) -> None:
        try:
            barrier.wait()
            topic_create(name=name, partitions=count, replication=3)
        except BaseException as exc:  # surfaced in the main thread below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=create, args=(f"t{i}", n))
               for i, n in enumerate(partitions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    spans = sorted((t.assignment_start, t.assignment_start + t.partitions)
                   for t in Topic.objects.all())
    assert spans[0][0] == 0
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:])), spans
    assert ClusterState.objects.get().assignment_cursor == sum(partitions)
