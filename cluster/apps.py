from django.apps import AppConfig


class ClusterConfig(AppConfig):
    name = "cluster"
    verbose_name = "Cluster (SC store)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The one place where the services learn how follow-ups reach Celery.
        from cluster import tasks
        from cluster.adapters import live_batches, redis_keys, scheduler, store_identity
        from cluster.engine import unit_of_work
        from cluster.projections.live import cluster_load
        from cluster.projections.network import NetworkView

        scheduler.install(tasks.CeleryScheduler())
        redis_keys.install_store_provider(store_identity.store_id)
        live_batches.install_cluster_load(cluster_load)
        unit_of_work.install_projection("network-view", NetworkView())
