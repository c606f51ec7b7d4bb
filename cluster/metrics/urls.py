from __future__ import annotations

from django.urls import path

from cluster.metrics import views

urlpatterns = [
    path("metrics", views.metrics, name="metrics"),
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
]
