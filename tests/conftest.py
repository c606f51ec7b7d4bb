"""Suite-wide: nothing Django-bound here, so `pytest tests/unit -p no:django` runs alone.

Integration and browser tests get their fixtures from tests/django_fixtures.py
through their own conftest files.
"""
