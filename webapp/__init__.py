import sys
from pathlib import Path

# Celery's Django recipe loads the app with Django, so shared tasks bind to it. A manage.py
# command loads it only when it sends a task (cluster/apps.py, planner/services.py import
# it then): `spu list` never pays for Celery's import.
if Path(sys.argv[0]).name != "manage.py":
    from webapp.celery import app as celery_app

    __all__ = ["celery_app"]
