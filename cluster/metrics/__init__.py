"""Operators' integrations: Prometheus metrics, health endpoints, JSON event logs.

Where the figures come from, and why this way rather than the library's
multiprocess mode:

* gauges (partitions, SPUs, leader imbalance, worker presence) are read at
  scrape time from the store and Redis (``collector.py``; the per-topic and
  per-SPU ones are written straight to the text format, ``exposition.py``):
  they are facts about the cluster, not about the process that happens to
  answer, so one scrape of the web process is right however many workers run;
* counters and the tick histogram change in Celery workers and commands, so
  they are held in Redis (``HINCRBY`` on one hash beside the replication
  state, ``counters.py``) and read by the same collector. Every process adds
  to the same figures, nothing lives in a per-process file that a restarted
  worker would orphan (multiprocess mode needs a shared directory, a cleanup
  hook per dead PID and cannot give gauges a cluster-wide meaning);
* the web process's own request metrics are the library's (django-prometheus
  middleware, the default registry): they are about that process only.
"""
