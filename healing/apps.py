from django.apps import AppConfig


class HealingConfig(AppConfig):
    name = "healing"
    verbose_name = "Self-healing"
    default_auto_field = "django.db.models.BigAutoField"
