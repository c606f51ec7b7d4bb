from django.apps import AppConfig

from webapp.startup import store_only_command


class HistoryConfig(AppConfig):
    name = "history"
    verbose_name = "History replay"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        if store_only_command():  # `spu list` and its like read rows only (webapp/startup.py)
            return
        # History hooks into the engine and the log's trim from here, so neither imports it.
        from cluster import ports
        from history import checkpoints, services

        ports.install_extra_entries("history-hw", checkpoints.hw_checkpoint)
        ports.install_trim_floor(services.trim_floor)
