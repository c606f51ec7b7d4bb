from django.apps import AppConfig


class HistoryConfig(AppConfig):
    name = "history"
    verbose_name = "History replay"
    default_auto_field = "django.db.models.BigAutoField"
