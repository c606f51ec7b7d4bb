"""Shared set-up of the workbench tests: a racked cluster with topics, worker on or off."""
from __future__ import annotations

import pytest


@pytest.fixture
def planned_cluster(seed_rack_cluster):
    """The seed's 12 SPUs in rack-a..rack-d with two topics."""
    from cluster.services import topic_create

    topic_create(name="orders", partitions=12, replication=3)
    topic_create(name="clicks", partitions=8, replication=2)


@pytest.fixture
def no_worker(monkeypatch):
    monkeypatch.setattr("planner.services.worker_running", lambda: False)


@pytest.fixture
def queued(monkeypatch) -> list[tuple[str, int]]:
    """A worker "runs": jobs are queued (recorded here) instead of computed in-process."""
    sent: list[tuple[str, int]] = []
    monkeypatch.setattr("planner.services.worker_running", lambda: True)
    monkeypatch.setattr("planner.services._enqueue",
                        lambda task, record: sent.append((task, record.pk)))
    return sent
