from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt

from cluster.api.views import api_not_found
from webapp.signin import AdminSignInForm, SignInForm

admin.site.login_form = AdminSignInForm

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(authentication_form=SignInForm), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", include("webapp.api_urls")),
    re_path(r"^api/(?P<path>.*)$", csrf_exempt(login_not_required(api_not_found))),
    path("planner/", include("planner.urls")),
    path("healing/", include("healing.urls")),
    path("history/", include("history.urls")),
    path("", include("cluster.metrics.urls")),
    path("", include("cluster.urls")),
]
