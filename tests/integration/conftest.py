"""Integration tests get the Django-bound fixtures (personas, real Redis)."""
from tests.django_fixtures import *  # noqa: F401,F403
from tests.integration.planner_fixtures import *  # noqa: F401,F403
