"""Settings: everything from the environment, with defaults that run on a laptop."""
from __future__ import annotations

import os
import sys
from datetime import timedelta
from pathlib import Path

import dj_database_url

from webapp.env import (database_token, env_bool, env_choice, env_float, env_int, env_str,
                        env_token, env_url, env_url_list)
from webapp.logconfig import FORMATS, logging_config
from webapp.queues import queue_setting
from webapp.redis_server import recorded_redis_url
from webapp.secret import load_or_create_secret

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY = load_or_create_secret(VAR_DIR)
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = [h for h in env_str("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",") if h]

# daphne's app only swaps `runserver` for its ASGI server (`make run` starts daphne itself);
# importing it loads Twisted, about a second of CPU, so other manage.py commands leave it out.
_MANAGE_COMMAND = sys.argv[1] if Path(sys.argv[0]).name == "manage.py" and len(sys.argv) > 1 \
    else None
INSTALLED_APPS = [
    *(["daphne"] if _MANAGE_COMMAND in (None, "runserver") else []),
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "cluster",
    "planner",
    "healing",
    "history",
]

MIDDLEWARE = [
    # The web process's own request metrics (first and last: they time the whole stack).
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    # Every request's Redis keys name its store (cluster/adapters/redis_keys.py).
    "webapp.middleware.BindStore",
    # Second: it compresses what every middleware below has finished writing (docs/security.md
    # says why compressing pages is safe here).
    "webapp.middleware.CompressResponses",
    "django.middleware.security.SecurityMiddleware",
    "webapp.middleware.RejectNulBytes",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "webapp.middleware.RequireReaderRole",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
    # Last, as django-axes asks: it turns a lockout into the answer of webapp/signin.py.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "webapp.urls"
TEMPLATES = [{
    # Django's, less the cycle a render leaves (webapp/template_backend.py).
    "BACKEND": "webapp.template_backend.DjangoTemplates",
    "NAME": "django",  # the alias Django's own backend has
    "DIRS": [BASE_DIR / "templates"],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
        "cluster.context_processors.engine_stall",
    ]},
}]
ASGI_APPLICATION = "webapp.asgi.application"
WSGI_APPLICATION = None

DATABASES = {"default": dj_database_url.parse(
    env_url("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
            ("sqlite", "postgres", "postgresql")),
    conn_max_age=env_int("DB_CONN_MAX_AGE", 0, minimum=0))}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # IMMEDIATE takes the write lock at BEGIN, so concurrent topic creations
    # queue up instead of failing with "database is locked" on upgrade.
    DATABASES["default"]["OPTIONS"] = {"transaction_mode": "IMMEDIATE", "timeout": 30}
    # A file (threads of one test share it), named per process so two test
    # runs on one machine never delete each other's database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# Sign-in throttling (django-axes, docs/security.md): LOGIN_FAILURE_LIMIT wrong passwords
# for one username from one address lock that pair out for LOGIN_LOCKOUT_MINUTES,
# on /login/, /admin/ and /api/token/ alike.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend",
                           "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "webapp.signin.lockout_response"
AXES_VERBOSE = False
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
# {% static %} URLs carry the file's content hash, so browsers may cache them a year
# (webapp/static_serving.py serves them compressed).
STORAGES = {"default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
            "staticfiles": {"BACKEND": "webapp.static_serving.VersionedStaticStorage"}}

DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# Unset REDIS_URL: the Redis `make run` uses here, private or not (it records it in
# var/redis.url); the store refuses a Redis that is not its own (store_identity.py).
REDIS_URL = env_url("REDIS_URL", recorded_redis_url(VAR_DIR) or "redis://127.0.0.1:6379/0",
                    ("redis", "rediss", "unix"))
SPARK_MASTER = env_str("SPARK_MASTER", "local[*]")
# The workbench's "auto" engine plans on Spark past this many partitions (x scenarios for a grid).
PLANNER_SPARK_PARTITIONS = env_int("PLANNER_SPARK_PARTITIONS", 200_000, minimum=1)
# Plans made from the store size a partition as retained records times this
# (the store counts records, not bytes); 1 KiB is Kafka's usual average record.
PLANNER_BYTES_PER_RECORD = env_int("PLANNER_BYTES_PER_RECORD", 1024, minimum=1)

# Every Redis client gives up on a server that stops answering (SIGSTOP, a dead host
# behind a live TCP connection) instead of hanging: commands exit 1, the API answers 503.
REDIS_SOCKET_TIMEOUT_S = env_float("REDIS_SOCKET_TIMEOUT_S", 5.0)
REDIS_CONNECT_TIMEOUT_S = env_float("REDIS_CONNECT_TIMEOUT_S", 2.0)
# An idle pooled connection is PINGed before reuse after this long, so a dead one is replaced.
REDIS_HEALTH_CHECK_S = env_int("REDIS_HEALTH_CHECK_S", 30, minimum=0)

CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
# kombu blocks on BRPOP for 1 s at a time, well inside the read timeout.
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_timeout": REDIS_SOCKET_TIMEOUT_S,
                                   "socket_connect_timeout": REDIS_CONNECT_TIMEOUT_S,
                                   "health_check_interval": REDIS_HEALTH_CHECK_S}
CELERY_REDIS_SOCKET_TIMEOUT = REDIS_SOCKET_TIMEOUT_S
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = REDIS_CONNECT_TIMEOUT_S
# Its own queue per installation (webapp/queues.py): a worker of another installation on
# the same Redis database never takes this one's tasks. Web, worker, beat and commands
# read the same settings, so they agree; CELERY_QUEUE names it explicitly.
CELERY_TASK_DEFAULT_QUEUE = queue_setting(env_str("CELERY_QUEUE", ""), DATABASES["default"])
# `celery inspect` and other broadcasts reach this installation's workers only.
CELERY_CONTROL_EXCHANGE = f"{CELERY_TASK_DEFAULT_QUEUE}.control"
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker process reserves one task beyond the one it runs: a tick's shard tasks then
# spread over every worker instead of queueing behind the first one that asked.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Beat's tick to the worker node that holds every replica set decoded, and the long
# periodic tasks to another node (cluster/routes.py).
CELERY_TASK_ROUTES = ("cluster.routes.route_task",)
RECONCILE_INTERVAL_S = env_float("RECONCILE_INTERVAL_S", 10.0)
# The reconcile beat heals rows that drifted from the hot state (a full read of both) at
# most this often; it catches the store up with the metadata log every time.
REPLICATION_RESYNC_INTERVAL_S = env_float("REPLICATION_RESYNC_INTERVAL_S", 60.0)
# The engine's SPU and topic controllers fold the operator intents logged since their last
# tick; this often (tick time) they compare every SPU and topic row instead, adopting rows
# written without an entry (cluster/engine/controllers.py).
REPLICATION_TOPOLOGY_COMPARE_S = env_float("REPLICATION_TOPOLOGY_COMPARE_S", 10.0)
# Replication shell (cluster/services/replication.py): one tick runs every live SPU loop.
REPLICATION_TICK_S = env_float("REPLICATION_TICK_S", 1.0)
# The engine has stalled (/readyz fails naming it, pages say so) when no tick committed for
# this long, or this many ticks failed in a row (cluster/services/tick_health.py).
REPLICATION_STALL_S = env_float("REPLICATION_STALL_S", max(10.0, 10 * REPLICATION_TICK_S))
REPLICATION_STALL_FAILURES = env_int("REPLICATION_STALL_FAILURES", 5, minimum=1)
REPLICATION_HEARTBEAT_TIMEOUT_S = env_float("REPLICATION_HEARTBEAT_TIMEOUT_S", 3.0)
REPLICATION_ELECTION_TIMEOUT_MS = env_int("REPLICATION_ELECTION_TIMEOUT_MS", 3000, minimum=1)
REPLICATION_LAG_TIME_MAX_MS = env_int("REPLICATION_LAG_TIME_MAX_MS", 10_000, minimum=0)
REPLICATION_MAX_RECORDS_PER_FETCH = env_int("REPLICATION_MAX_RECORDS_PER_FETCH", 0, minimum=0)
REPLICATION_LOG_RETENTION = env_int("REPLICATION_LOG_RETENTION", 10_000, minimum=0)
# The record ids every partition together retains at most (0: no bound): past it each keeps
# a 1-2-5 share instead of REPLICATION_LOG_RETENTION (100,000 partitions: 1,000 each). An id
# held costs the engine ~57 bytes at replication 3 (docs/durability.md), so ~5.7 GB here.
REPLICATION_RETAINED_IDS = env_int("REPLICATION_RETAINED_IDS", 100_000_000, minimum=0)
# Offsets (HW/LEO) rows a unit of work writes to the store beyond those whose status moved:
# past it, one slice of the rows per unit of work (cluster/engine/mirror.py).
REPLICATION_MIRROR_ROWS = env_int("REPLICATION_MIRROR_ROWS", 2000, minimum=1)
# The offsets (HW/LEO) columns of a row are written at most once this many seconds (rows
# whose status moved at once); the durable floor is the row's reservation, not its HW
# (cluster/engine/mirror.py). 0: every unit of work writes its moved rows.
REPLICATION_MIRROR_INTERVAL_S = env_float("REPLICATION_MIRROR_INTERVAL_S", 5.0)
# A save of more changed replica sets than this is written as fenced pieces of at most
# this many sets each, so no transaction holds Redis long (cluster/adapters/save_pieces.py).
REPLICATION_SAVE_PIECE_SETS = env_int("REPLICATION_SAVE_PIECE_SETS", 500, minimum=1)
# A dropped topic's sets are deleted after the save that drops it, this many a fenced
# piece (their records keys and status fields together: cluster/adapters/drop_pieces.py).
REPLICATION_DROP_PIECE_SETS = env_int("REPLICATION_DROP_PIECE_SETS", 4000, minimum=1)
# Steady sets' statuses written a block at a time, as rows (cluster/adapters/status_rows.py):
# off only to compare with the status a field of every set.
REPLICATION_STATUS_ROWS = env_bool("REPLICATION_STATUS_ROWS", True)
# Metadata-log entries kept in Redis past what the store applied (cluster/adapters/
# metadata_log.py); older ones are trimmed, the store's rows being the snapshot they leave.
METADATA_LOG_RETENTION = env_int("METADATA_LOG_RETENTION", 1_000_000, minimum=1000)
# How long a use case waits for the hot-state lease; the lease itself is short and renewed
# while its holder works, so a crashed holder stalls the engine for one lease at most.
REPLICATION_LOCK_TIMEOUT_S = env_float("REPLICATION_LOCK_TIMEOUT_S", 60.0)
REPLICATION_LOCK_LEASE_S = env_float("REPLICATION_LOCK_LEASE_S", 3.0)
REPLICATION_SETTLE_TIMEOUT_S = env_float("REPLICATION_SETTLE_TIMEOUT_S", 30.0)
# How long a produce with acks=all waits for the LRS, whichever shell asked (page, API, CLI).
PRODUCE_WAIT_S = env_float("PRODUCE_WAIT_S", 10.0)
# One request's records, whichever shell asked: a billion-record produce once took 22 GB.
PRODUCE_MAX_RECORDS = env_int("PRODUCE_MAX_RECORDS", 100_000, minimum=1)
CONSUME_MAX_RECORDS = env_int("CONSUME_MAX_RECORDS", 100_000, minimum=1)
REPLICATION_WORKER_TTL_S = env_int("REPLICATION_WORKER_TTL_S", 5, minimum=2)
REPLICATION_SIMULATED_PRODUCERS = env_bool("REPLICATION_SIMULATED_PRODUCERS", True)
# SPU loops split into this many shards, each a task any worker may run (cluster/adapters/
# shards.py); 1 keeps the single tick task. Every worker and beat must use the same value.
REPLICATION_SHARDS = env_int("REPLICATION_SHARDS", 1, minimum=1)
# The Redis servers of the hot state (comma-separated; docs/engine-throughput.md, "Hot state
# on several Redis servers"): shard s lives on the (s mod n)-th, the cluster lease, meta and
# metadata log on the first. Empty: the hot state is on REDIS_URL, as the broker is.
HOT_STATE_REDIS_URLS = env_url_list("HOT_STATE_REDIS_URLS", ("redis", "rediss", "unix"))
# Kafka's auto.leader.rebalance.enable and its check: preferred leaders come back by themselves.
AUTO_LEADER_REBALANCE = env_bool("AUTO_LEADER_REBALANCE", True)
# Kafka checks every 300 s; a demo cluster is watched by people, so 30 s.
LEADER_IMBALANCE_CHECK_INTERVAL_S = env_float("LEADER_IMBALANCE_CHECK_INTERVAL_S", 30.0)
LEADER_IMBALANCE_PER_SPU_PERCENTAGE = env_int("LEADER_IMBALANCE_PER_SPU_PERCENTAGE", 10,
                                              minimum=0)
# Plan execution: Cruise Control's caps, and the simulated size of one record for bytes_moved.
PLAN_MAX_MOVES_PER_SPU = env_int("PLAN_MAX_MOVES_PER_SPU", 5, minimum=1)
PLAN_MAX_MOVES = env_int("PLAN_MAX_MOVES", 50, minimum=1)
PLAN_MOVE_TIMEOUT_MS = env_int("PLAN_MOVE_TIMEOUT_MS", 60_000, minimum=1)
# An operator's apply cancels a self-healing plan being carried out and waits this long for
# its moves in flight to end (roll back, or finish) before its own plan starts.
PLAN_PREEMPT_WAIT_S = env_float("PLAN_PREEMPT_WAIT_S", 15.0)
REPLICATION_RECORD_BYTES = env_int("REPLICATION_RECORD_BYTES", 1024, minimum=1)
# Self-healing's anomaly detector (healing/): how often it looks and drives its plans.
HEALING_CHECK_INTERVAL_S = env_float("HEALING_CHECK_INTERVAL_S", 5.0)
# History replay (history/, docs/history.md): how far back moments are kept, how often the
# replayed cluster is snapshotted, and how often HW/LEO are checkpointed into the log.
HISTORY_RETENTION_S = env_float("HISTORY_RETENTION_S", 7 * 24 * 3600.0)
HISTORY_SNAPSHOT_S = env_float("HISTORY_SNAPSHOT_S", 600.0)
HISTORY_SNAPSHOT_ENTRIES = env_int("HISTORY_SNAPSHOT_ENTRIES", 20_000, minimum=100)
HISTORY_HW_INTERVAL_S = env_float("HISTORY_HW_INTERVAL_S", 300.0)
# A hard bound on the metadata log's length that wins over HISTORY_RETENTION_S: snapshots
# more than this many entries behind the head go, so the trim floor follows (docs/history.md).
HISTORY_LOG_MAX_ENTRIES = env_int("HISTORY_LOG_MAX_ENTRIES", 2_000_000, minimum=1000)

CELERY_BEAT_SCHEDULE = {
    "history-snapshot": {"task": "history.tasks.history_snapshot", "schedule": 60.0,
                         "options": {"expires": 60.0}},
    "leader-rebalance": {"task": "cluster.tasks.leader_rebalance_check",
                         "schedule": LEADER_IMBALANCE_CHECK_INTERVAL_S,
                         "options": {"expires": LEADER_IMBALANCE_CHECK_INTERVAL_S}},
    "healing-check": {"task": "healing.tasks.healing_check",
                      "schedule": HEALING_CHECK_INTERVAL_S,
                      "options": {"expires": HEALING_CHECK_INTERVAL_S}},
    "reconcile-topics": {"task": "cluster.tasks.reconcile_topics",
                         "schedule": RECONCILE_INTERVAL_S},
    # Ticks expire after one interval: a backlog (no worker for a while) is dropped, not replayed.
    "replication-tick": {"task": "cluster.tasks.replication_tick",
                         "schedule": REPLICATION_TICK_S,
                         "options": {"expires": REPLICATION_TICK_S}},
}

# Announce store changes to open pages over Channels (cluster/live.py).
LIVE_UPDATES = env_bool("LIVE_UPDATES", True)
# Every this many seconds a live socket tells its page each group's sequence, so a page
# whose last message was lost (a process killed between numbering and sending it) resyncs
# that group rather than showing old data until the next change; 0 turns it off.
LIVE_BEACON_S = env_float("LIVE_BEACON_S", 5.0)
# redis-py's asyncio pool refuses the 101st concurrent connection; a burst of sockets
# connecting at once needs more than that, each only for a moment (docs/live.md).
CHANNEL_LAYER_MAX_CONNECTIONS = env_int("CHANNEL_LAYER_MAX_CONNECTIONS", 2000, minimum=10)
# redis-py's default 5 s read timeout equals channels_redis's 5 s BZPOPMIN, so a busy
# process lost its sockets to "Timeout reading"; the read must outlast the block.
CHANNEL_LAYER_HOST = {"max_connections": CHANNEL_LAYER_MAX_CONNECTIONS, "socket_timeout": 30}
# Two installations on one Redis database must not hear each other's pages: the channel
# layer's groups and the live batches (sequences, pending rows) carry this token, taken
# from the database an installation stores into unless LIVE_NAMESPACE names one.
LIVE_NAMESPACE = env_token("LIVE_NAMESPACE", database_token(DATABASES["default"]))
CHANNEL_LAYER_PREFIX = f"asgi-{LIVE_NAMESPACE}"
CHANNEL_LAYERS = {"default": {
    "BACKEND": "channels_redis.core.RedisChannelLayer",
    "CONFIG": {"hosts": [{"address": REDIS_URL, **CHANNEL_LAYER_HOST}],
               "prefix": CHANNEL_LAYER_PREFIX},
}}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["cluster.api.parsers.JSONParser",
                               "rest_framework.parsers.FormParser",
                               "rest_framework.parsers.MultiPartParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "webapp.pagination.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Streaming cluster control room API",
    "VERSION": "1.0.0",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {"PlanStateEnum": "planner.api.serializers.PLAN_STATES",
                            "GridStateEnum": "planner.api.serializers.GRID_STATES",
                            "ExecutionStateEnum": "planner.api.serializers.EXECUTION_STATES",
                            "MoveOutcomeEnum": "planner.api.serializers.MOVE_OUTCOMES"},
}

# Operators' integrations (cluster/metrics/): /metrics needs this bearer token; empty = loopback only.
METRICS_TOKEN = env_str("METRICS_TOKEN", "")
LOG_FORMAT = env_choice("LOG_FORMAT", "text", FORMATS)
LOG_DIR = VAR_DIR / "logs"
LOG_DIR.mkdir(parents=True, exist_ok=True)
LOGGING = logging_config(LOG_FORMAT, LOG_DIR, env_str("LOG_LEVEL", "WARNING"))
