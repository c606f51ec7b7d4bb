from __future__ import annotations

from django.urls import path

from healing import views

app_name = "healing"
urlpatterns = [
    path("", views.healing_page, name="healing"),
    path("mode/", views.healing_mode_view, name="mode"),
    path("settings/", views.healing_setting_view, name="setting"),
]
