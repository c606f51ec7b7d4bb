from django.apps import AppConfig


class ClusterConfig(AppConfig):
    name = "cluster"
    verbose_name = "Cluster (SC store)"
    default_auto_field = "django.db.models.BigAutoField"
