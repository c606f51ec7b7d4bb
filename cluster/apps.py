from django.apps import AppConfig

from cluster.adapters.scheduler import Followups, Scheduler
from webapp.startup import store_only_command


class CelerySchedulerOnFirstUse:
    """cluster.tasks (Celery, its signals) loads with the first follow-up sent, not at every
    start: a command that sends none (`spu list`) never pays for it. A worker imports the
    module itself (autodiscovery) before its signals fire."""

    def dispatch(self, followups: Followups) -> None:
        self._loaded().dispatch(followups)

    def kick(self) -> None:
        self._loaded().kick()

    @staticmethod
    def _loaded() -> Scheduler:
        import webapp.celery  # noqa: F401  the configured app, before a task is sent
        from cluster import tasks
        from cluster.adapters import scheduler

        real = tasks.CeleryScheduler()
        scheduler.install(real)
        return real


class ClusterConfig(AppConfig):
    name = "cluster"
    verbose_name = "Cluster (SC store)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        if store_only_command():  # `spu list` and its like read rows only (webapp/startup.py)
            return
        # The one place where the services learn how follow-ups reach Celery.
        from cluster.adapters import live_batches, redis_keys, scheduler, store_identity
        from cluster.engine import unit_of_work
        from cluster.projections.live import cluster_load
        from cluster.projections.network import NetworkView

        scheduler.install(CelerySchedulerOnFirstUse())
        redis_keys.install_store_provider(store_identity.store_id)
        live_batches.install_cluster_load(cluster_load)
        unit_of_work.install_projection("network-view", NetworkView())
