from django.apps import AppConfig

from webapp.startup import store_only_command


class PlannerConfig(AppConfig):
    name = "planner"
    verbose_name = "Planner"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        if store_only_command():  # `spu list` and its like read rows only (webapp/startup.py)
            return
        # The plan executor runs inside every replication tick (cluster/ports.py, tick steps).
        from cluster.management.commands._installed_actions import install
        from cluster.metrics.collector import register_moves_in_flight
        from cluster.ports import install_tick_step
        from planner.execution import moves_in_flight
        from planner.executor import plan_executor_step
        from planner.management.spu_drain import DrainAction

        install_tick_step(plan_executor_step)
        # `spu drain` is the planner's: the cluster's command learns it here, never imports it.
        install("spu", DrainAction())
        register_moves_in_flight(moves_in_flight)
