from django.apps import AppConfig


class ClusterConfig(AppConfig):
    name = "cluster"
    verbose_name = "Cluster (SC store)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from webapp.startup import store_only_command

        if store_only_command():  # `spu list` and its like read rows only (webapp/startup.py)
            return
        # Every app's models are loaded by now: the composition root wires the engine and
        # the other apps into it, once (webapp/bootstrap.py).
        from webapp.bootstrap import bootstrap

        bootstrap()
