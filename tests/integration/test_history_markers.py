"""The scrubber's one-click compares: an outage's "after" is the cluster once its elections ran."""
from __future__ import annotations

from history.markers import _settled


def _mark(kind: str, before: str, after: str) -> dict[str, str]:
    return {"kind": kind, "before": before, "after": after, "moment": after}


def test_an_outage_compares_up_to_the_next_cause_not_the_same_second():
    marks = _settled([_mark("outage", "9", "10"), _mark("election", "11", "40"),
                      _mark("unclean", "41", "42"), _mark("recovery", "99", "100")])
    assert marks[0]["after"] == "99"            # its elections and unclean election included
    assert marks[0]["moment"] == "10"           # the scrubber still lands on the outage itself
    assert marks[1]["after"] == "40"            # an election's own compare is unchanged


def test_the_last_cause_compares_with_now():
    assert _settled([_mark("plan-start", "5", "6")])[0]["after"] == "now"


def test_an_outages_events_across_a_second_boundary_make_one_mark(db):
    from datetime import UTC, datetime, timedelta

    from cluster.models import Event
    from history.markers import markers

    start = datetime(2026, 11, 25, 14, 33, 10, 999_000, tzinfo=UTC)
    for spu, (at, offset) in enumerate(((start, 7), (start + timedelta(milliseconds=4), 8),
                                        (start + timedelta(milliseconds=1500), 9))):
        event = Event.objects.create(actor="t", object_type="spu", object_name=str(spu),
                                     operation="offline", log_offset=offset)
        Event.objects.filter(pk=event.pk).update(at=at)  # ``at`` is set on create
    marks = markers(None)
    assert [(m["kind"], m["count"]) for m in marks] == [("outage", 2), ("outage", 1)]
    assert (marks[0]["before"], marks[0]["after"]) == ("6", "8")  # up to the next outage
