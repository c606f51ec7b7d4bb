from django.contrib import admin

from planner.models import Plan


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "created_at", "created_by", "source", "engine", "elapsed_ms"]
    list_filter = ["source", "engine"]
