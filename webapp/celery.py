"""The Celery app: broker and beat schedule come from Django settings."""
from __future__ import annotations

import os

from typing import Any

from celery import Celery, Task

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")



class StoreTask(Task):
    """Every task binds its store for its run (cluster/adapters/redis_keys.py: a key made
    outside a binding is an error): the id is read from the engine at its first key."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from cluster.ports import engine  # the app is set up only once a task runs

        with engine().serving():
            return super().__call__(*args, **kwargs)


app = Celery("webapp", task_cls=StoreTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
