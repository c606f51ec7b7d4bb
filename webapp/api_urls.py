"""The one route table of the JSON API: every app's endpoints under /api/.

webapp/urls.py includes this once; unknown /api/ paths answer JSON there.
"""
from django.urls import include, path

urlpatterns = [
    path("plans/", include("planner.api.urls")),
    path("healing/", include("healing.api.urls")),
    path("history/", include("history.api_urls")),
    path("", include("cluster.api.urls")),
]
