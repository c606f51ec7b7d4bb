from __future__ import annotations

from django.urls import path

from planner import apply_views, import_views, views

app_name = "planner"
urlpatterns = [
    path("", views.workbench, name="workbench"),
    path("plans/new/", views.plan_create_view, name="plan-create"),
    path("plans/<int:plan_id>/", views.plan_detail, name="plan"),
    path("plans/<int:plan_id>/cancel/", apply_views.plan_cancel_view, name="plan-cancel"),
    path("plans/<int:plan_id>/apply/", apply_views.plan_apply_view, name="plan-apply"),
    path("plans/<int:plan_id>/pause/", apply_views.plan_pause_view, name="plan-pause"),
    path("plans/<int:plan_id>/resume/", apply_views.plan_resume_view, name="plan-resume"),
    path("plans/<int:plan_id>/throttle/", apply_views.plan_throttle_view, name="plan-throttle"),
    path("plans/<int:plan_id>/register-spus/", apply_views.plan_register_spus_view,
         name="plan-register-spus"),
    path("plans/<int:plan_id>/online-spus/", apply_views.plan_online_spus_view,
         name="plan-online-spus"),
    path("plans/<int:plan_id>/rest/", apply_views.plan_rest_view, name="plan-rest"),
    path("plans/<int:plan_id>/rollback.json", apply_views.plan_rollback_json,
         name="plan-rollback"),
    path("drain/<int:spu_id>/", apply_views.spu_drain_view, name="spu-drain"),
    path("plans/<int:plan_id>/reassignment.json", views.plan_kafka_json, name="plan-kafka"),
    path("plans/<int:plan_id>/fluvio.zip", views.plan_fluvio_zip, name="plan-fluvio"),
    path("plans/<int:plan_id>/moves.csv", views.plan_moves_csv, name="plan-csv"),
    path("grids/new/", views.grid_create_view, name="grid-create"),
    path("imports/", import_views.imports, name="imports"),
    path("imports/new/", import_views.import_create_view, name="import-create"),
    path("imports/<int:import_id>/", import_views.import_detail, name="import"),
    path("imports/<int:import_id>/plan/", import_views.import_plan_view, name="import-plan"),
    path("grids/<int:grid_id>/", views.grid_detail, name="grid"),
    path("grids/<int:grid_id>/cancel/", views.grid_cancel_view, name="grid-cancel"),
]
