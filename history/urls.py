from django.urls import path

from history import views

app_name = "history"
urlpatterns = [
    path("", views.history_page, name="history"),
    path("diff/", views.history_diff_page, name="diff"),
]
