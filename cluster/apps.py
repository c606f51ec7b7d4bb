from django.apps import AppConfig


class ClusterConfig(AppConfig):
    name = "cluster"
    verbose_name = "Cluster (SC store)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The one place where the services learn how follow-ups reach Celery.
        from cluster import tasks
        from cluster.adapters import redis_keys, scheduler, store_identity

        scheduler.install(tasks.CeleryScheduler())
        redis_keys.install_store_provider(store_identity.store_id)
