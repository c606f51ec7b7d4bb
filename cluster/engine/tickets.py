"""Produce tickets: an acks=all write someone waits for learns its outcome here.

The outcome is decided by the core (``RecordsAcknowledged`` with acks=all, or
``AckFailed``); this only records it on the ticket the write opened.
"""
from __future__ import annotations

from cluster.adapters import hot_state
from cluster.adapters.hot_state import Ticket
from cluster.adapters.lease import Held
from cluster.core.replication import (AckFailed, AckOutcome, Acks, Action,
                                      RecordsAcknowledged, ack_outcome)


def record_ack_outcomes(actions: list[Action], held: Held) -> None:
    """Fill in the open tickets these actions decide, fenced by the unit's ``held`` leases."""
    acks = [a for a in actions if (isinstance(a, RecordsAcknowledged) and a.acks is Acks.ALL)
            or isinstance(a, AckFailed)]
    if not acks:
        return
    for first, ticket in hot_state.open_tickets().items():
        if _apply_acks(first, ticket, acks):
            done = ticket["state"] != AckOutcome.PENDING.value
            hot_state.write_ticket(held, first, ticket, still_open=not done)


def _apply_acks(first: int, ticket: Ticket, acks: list[Action]) -> bool:
    ids = range(first, first + ticket["count"])
    moved = failed = False
    for a in acks:
        hits = sum(1 for _, rid in a.records if rid in ids)
        if not hits:
            continue
        moved = True
        if isinstance(a, AckFailed):
            failed = True
            ticket.setdefault("code", a.code)
            ticket.setdefault("reason", a.reason)
        else:
            ticket["acked"] = ticket.get("acked", 0) + hits
    state = ack_outcome(AckOutcome(ticket["state"]), count=ticket["count"],
                        acked=ticket.get("acked", 0), failed=failed, committed=False)
    ticket["state"] = state.value
    return moved
