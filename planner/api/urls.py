"""Plan API routes, included under /api/plans/ (webapp/api_urls.py): the workbench's
plans and grids, and carrying a plan out (execution.py)."""
from __future__ import annotations

from django.urls import path

from cluster.api.views import as_api
from planner.api import execution, views

app_name = "plans-api"
urlpatterns = [
    path("", as_api(views.PlanListView), name="plans"),
    path("<int:plan_id>/", as_api(views.PlanDetailView), name="plan"),
    path("<int:plan_id>/apply/", as_api(execution.PlanApplyView), name="plan-apply"),
    path("<int:plan_id>/pause/", as_api(execution.PlanPauseView), name="plan-pause"),
    path("<int:plan_id>/resume/", as_api(execution.PlanResumeView), name="plan-resume"),
    path("<int:plan_id>/throttle/", as_api(execution.PlanThrottleView), name="plan-throttle"),
    # One cancel: a plan being computed stops computing; an applied one stops moving.
    path("<int:plan_id>/cancel/", as_api(views.PlanCancelView), name="plan-cancel"),
    path("grids/", as_api(views.GridListView), name="grids"),
    path("grids/<int:grid_id>/", as_api(views.GridDetailView), name="grid"),
    path("grids/<int:grid_id>/cancel/", as_api(views.GridCancelView), name="grid-cancel"),
]
