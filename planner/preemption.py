"""Plans that give way to an operator's: which, and who is told.

An app whose plans an operator's apply takes precedence over (self-healing) is
named to the engine (composition/bootstrap.py: ``yielding_actors``, ``preempting``);
the planner then cancels such a plan, through its ordinary cancel, when an
operator applies one of their own while it runs (planner/execution.py), and
tells the app first (``preempting`` below). If the
operator's apply is refused after all (the moves in flight did not end in time,
or the cancelled plan's finished moves changed what the operator's plan started
from), the app is expected to wait a while for the operator's next apply. The planner
knows no app above it: the engine's two arguments are the whole coupling.
"""
from __future__ import annotations

from cluster import ports
from cluster.services.events import Actor, actor_name
from planner.models import PlanExecution


def preempting(*, execution: PlanExecution, plan_id: int, by: Actor) -> None:
    """Called inside the transaction that cancels the yielding plan, before the cancel:
    ``execution`` (the yielding plan's), ``plan_id`` (the operator's), ``by`` (the operator)."""
    ports.engine().tell_preempting(execution=execution, plan_id=plan_id, by=by)


def yielding(by: Actor) -> PlanExecution | None:
    """The unfinished execution an apply by ``by`` takes precedence over, if any: one made and
    applied by a yielding actor (an operator applying such a plan makes it theirs), when ``by``
    is an operator. Two operators' plans still refuse each other."""
    actors = ports.engine().yielding_actors
    if not actors or actor_name(by) in actors:
        return None
    return PlanExecution.objects.filter(finished_at__isnull=True, created_by__in=actors,
                                        plan__created_by__in=actors).first()
