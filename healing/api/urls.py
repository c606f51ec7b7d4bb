"""Self-healing API routes, included under /api/healing/ (webapp/api_urls.py)."""
from __future__ import annotations

from django.urls import path

from cluster.api.views import as_api
from healing.api import views

app_name = "healing-api"
urlpatterns = [
    path("", as_api(views.HealingView), name="healing"),
    path("anomalies/", as_api(views.AnomalyListView), name="anomalies"),
    path("settings/", as_api(views.SettingsView), name="settings"),
]
