"""History's pure core: the cluster at any offset of the metadata log (``replay``) and what
changed between two moments (``diff``). It reads cluster's core (the log's entries and
statuses) and imports nothing of Django, Celery or Redis."""
