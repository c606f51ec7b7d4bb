from django.apps import AppConfig


class HistoryConfig(AppConfig):
    name = "history"
    verbose_name = "History replay"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # History hooks into the engine and the log's trim from here, so neither imports it.
        from cluster import ports
        from history import checkpoints, services

        ports.install_extra_entries("history-hw", checkpoints.hw_checkpoint)
        ports.install_trim_floor(services.trim_floor)
