from django.urls import path

from cluster.api.views import as_api
from history import api

app_name = "history-api"
urlpatterns = [
    path("", as_api(api.HistoryMomentView), name="moment"),
    path("diff/", as_api(api.HistoryDiffView), name="diff"),
]
