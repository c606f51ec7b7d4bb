from django.apps import AppConfig


class PlannerConfig(AppConfig):
    name = "planner"
    verbose_name = "Planner"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
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
