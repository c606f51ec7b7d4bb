from django.apps import AppConfig


class ClusterConfig(AppConfig):
    name = "cluster"
    verbose_name = "Cluster (SC store)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from composition.startup import store_only_command

        if store_only_command():  # `spu list` and its like read rows only (composition/startup.py)
            return
        # Every app's models are loaded by now: the composition root wires the engine and
        # the other apps into it, once (composition/bootstrap.py).
        from composition.bootstrap import bootstrap

        bootstrap()
