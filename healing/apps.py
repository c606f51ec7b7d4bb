from django.apps import AppConfig

from webapp.startup import store_only_command


class HealingConfig(AppConfig):
    name = "healing"
    verbose_name = "Self-healing"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        if store_only_command():  # `spu list` and its like read rows only (webapp/startup.py)
            return
        # The anomaly gauges and the moves counter join the control room's scrape.
        from cluster.metrics.collector import register_families
        from healing.metrics import families

        register_families(families)
        # An operator's apply takes precedence over self-healing's plans (planner/preemption.py).
        from healing.plans import ACTOR
        from healing.preemption import on_preempting
        from planner.preemption import preempting, yields_to_operators

        yields_to_operators(ACTOR)
        preempting.connect(on_preempting, dispatch_uid="healing-preempting")
