"""Store changes are announced to pages after commit, and a rollback never stops them."""
import pytest
from django.db import transaction

from cluster.services.events import log_event


@pytest.fixture
def announced(monkeypatch, settings):
    settings.LIVE_UPDATES = True
    sent: list[tuple[str, dict]] = []
    # Each announcement stages the logged event for the cluster group's next message
    # (a topic's event also goes to the topic's own group, not counted here).
    monkeypatch.setattr("cluster.projections.announce.stage", lambda group, data, **_: (
        sent.append((group, data["events"][0])) if group == "cluster" else None))
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
