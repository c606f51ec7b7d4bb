from django.urls import path

from cluster import views

app_name = "cluster"
urlpatterns = [
    path("", views.overview, name="overview"),
]
