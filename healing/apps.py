from django.apps import AppConfig


class HealingConfig(AppConfig):
    name = "healing"
    verbose_name = "Self-healing"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The anomaly gauges and the moves counter join the control room's scrape.
        from cluster.metrics.collector import register_families
        from healing.metrics import families

        register_families(families)
