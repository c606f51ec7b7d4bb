"""Store changes are announced to pages after commit, and a rollback never stops them."""
import pytest
from django.db import transaction

from cluster.services.events import log_event


@pytest.fixture
def announced(monkeypatch, settings):
    settings.LIVE_UPDATES = True
    sent: list[tuple[str, dict]] = []
    # Each announcement stages the logged events for the cluster group's next message
    # (a topic's event also goes to the topic's own group, not counted here).
    monkeypatch.setattr("cluster.projections.announce.stage_many", lambda batches, **_: (
        sent.extend(("cluster", e) for e in batches.get("cluster", {}).get("events", []))))
    return sent


@pytest.mark.django_db(transaction=True)
def test_a_change_is_announced_once_committed(announced):
    with transaction.atomic():
        log_event("tester", "topic", "orders", "create")
        assert announced == []
    assert [p["object_name"] for _, p in announced] == ["orders"]


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_change_is_not_announced_and_later_ones_still_are(announced):
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            log_event("tester", "topic", "ghost", "create")
            raise RuntimeError("rolled back")
    with transaction.atomic():
        log_event("tester", "topic", "orders", "create")
    assert [p["object_name"] for _, p in announced] == ["orders"]


@pytest.mark.django_db(transaction=True)
def test_a_units_events_are_staged_together_each_object_read_once(monkeypatch, settings,
                                                                  django_assert_max_num_queries):
    """A failover logs thousands of events in one unit: they reach the pages in one staging
    (one Redis round trip), every group's events in order, each SPU or topic read once."""
    from cluster.live import topic_group
    from cluster.models import Event, Spu, Topic
    from cluster.projections.announce import announce

    settings.LIVE_UPDATES = True
    calls: list[dict] = []
    monkeypatch.setattr("cluster.projections.announce.stage_many",
                        lambda batches, **_: calls.append(batches))
    Spu.objects.create(id=7, rack="r1")
    Topic.objects.create(name="orders", partitions=1, replication_factor=1)
    events = [Event(actor="t", object_type=kind, object_name=name, operation=op)
              for kind, name, op in [("topic", "orders", "create"), ("spu", "7", "offline"),
                                     ("partition", "orders/0", "elected"),
                                     ("topic", "orders", "degraded")]]
    # BEGIN, the insert, COMMIT; then the topic's row and the SPU's, once each.
    with django_assert_max_num_queries(5):
        with transaction.atomic():
            Event.objects.bulk_create(events)
            announce(events)
    assert len(calls) == 1
    cluster, topic = calls[0]["cluster"], calls[0][topic_group("orders")]
    assert [e["operation"] for e in cluster["events"]] == ["create", "offline", "elected",
                                                           "degraded"]
    assert [t["name"] for t in cluster["topics"]] == ["orders"]
    assert [s["id"] for s in cluster["spus"]] == [7]
    assert [e["operation"] for e in topic["events"]] == ["create", "degraded"]


@pytest.mark.django_db(transaction=True)
def test_a_units_events_are_rows_for_the_newest_a_batch_carries_only(monkeypatch, settings):
    """A group's batch carries its newest LIVE_EVENTS events (live_batches): announce makes
    rows of those alone, in order, whatever else the unit logged."""
    from cluster.adapters.live_batches import LIVE_EVENTS
    from cluster.live import topic_group
    from cluster.models import Event, Topic
    from cluster.projections import announce as announcing

    settings.LIVE_UPDATES = True
    calls: list[dict] = []
    made: list[str] = []
    real_row = announcing.event_row
    monkeypatch.setattr(announcing, "stage_many", lambda batches, **_: calls.append(batches))
    monkeypatch.setattr(announcing, "event_row",
                        lambda e: made.append(e.object_name) or real_row(e))
    Topic.objects.create(name="orders", partitions=1, replication_factor=1)
    events = [Event(actor="t", object_type="partition", object_name=f"orders/{i}",
                    operation="status") for i in range(LIVE_EVENTS + 50)]
    events.insert(10, Event(actor="t", object_type="topic", object_name="orders",
                            operation="degraded"))
    with transaction.atomic():
        Event.objects.bulk_create(events)
        announcing.announce(events)
    cluster, topic = calls[0]["cluster"], calls[0][topic_group("orders")]
    assert [e["object_name"] for e in cluster["events"]] == [
        e.object_name for e in events[-LIVE_EVENTS:]]
    assert [e["operation"] for e in topic["events"]] == ["degraded"]
    assert sorted(made) == sorted([e.object_name for e in events[-LIVE_EVENTS:]] + ["orders"])
