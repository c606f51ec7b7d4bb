"""The composition root: the one place that builds the replication engine and wires the
other apps into it (cosmicpython's ``bootstrap.py``, Fluvio's ``fluvio-sc/src/init.rs``).

Every collaborator the engine runs is an argument of ``Engine`` here, in the order a tick
meets it, so what runs at every tick is read in one place rather than pieced together from
the apps' ``ready()`` methods. ``composition`` is the top layer, a package of its own above
``webapp`` (which the apps use for settings, logging, static files and Celery): it may
import every app (the layering test names this module as the one exception to "no app
imports another's engine").
``ClusterConfig.ready`` calls ``bootstrap()`` once all the apps' models are loaded; no other
``ready()`` wires anything.
"""
from __future__ import annotations

from cluster.adapters.scheduler import Followups, Scheduler
from cluster.engine import engine as engine_module
from cluster.engine.engine import Engine


class CelerySchedulerOnFirstUse:
    """cluster.tasks (Celery, its signals) loads with the first follow-up sent, not at every
    start: a command that sends none (`spu list`) never pays for it. A worker imports the
    module itself (autodiscovery) before its signals fire."""

    def __init__(self) -> None:
        self._real: Scheduler | None = None

    def dispatch(self, followups: Followups) -> None:
        self._loaded().dispatch(followups)

    def kick(self) -> None:
        self._loaded().kick()

    def _loaded(self) -> Scheduler:
        if self._real is None:
            import webapp.celery  # noqa: F401  the configured app, before a task is sent
            from cluster import tasks

            self._real = tasks.CeleryScheduler()
        return self._real


def build() -> Engine:
    """The engine with this installation's collaborators."""
    from cluster.core.replication import intents
    from cluster.projections.network import NetworkView
    from healing.metrics import families as healing_families
    from healing import intents as healing_intents
    from healing.plans import ACTOR as SELF_HEALING
    from healing.preemption import on_preempting
    from history import checkpoints
    from history.services import trim_floor
    from planner.execution import moves_in_flight
    from planner import intents as plan_intents
    from planner.executor import plan_executor_step
    from planner.management.spu_drain import DrainAction
    from cluster.projections import store as store_projection  # the store's rows

    return Engine(
        scheduler=CelerySchedulerOnFirstUse(),
        store_rows=store_projection.catch_up,
        tick_steps=(plan_executor_step,),
        extra_entries={"history-hw": checkpoints.HwCheckpoints()},
        projections={"network-view": NetworkView()},
        intent_projections={intents.PLAN_CONTROL: plan_intents.apply,
                            intents.HEALING_SET: healing_intents.apply},
        trim_floor=trim_floor,
        command_actions={"spu": (DrainAction(),)},
        yielding_actors=frozenset({SELF_HEALING}),
        preempting=(on_preempting,),
        moves_in_flight=(moves_in_flight,),
        metric_families=(healing_families,),
    )


def bootstrap() -> Engine:
    """Build the engine and make it this process's (``cluster.engine.engine.current``)."""
    return engine_module.start(build())


def engine() -> Engine:
    """The engine ``bootstrap`` built (the same object as ``cluster.ports.engine()``)."""
    return engine_module.current()
