"""Settings: everything from the environment, with defaults that run on a laptop."""
from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

from webapp.env import env_bool, env_float, env_int, env_str, env_url
from webapp.secret import load_or_create_secret

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY = load_or_create_secret(VAR_DIR)
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = [h for h in env_str("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",") if h]

INSTALLED_APPS = [
    "daphne",
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
    "cluster",
    "planner",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "webapp.middleware.RejectNulBytes",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "webapp.urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [BASE_DIR / "templates"],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
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

DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

REDIS_URL = env_url("REDIS_URL", "redis://127.0.0.1:6379/0", ("redis", "rediss", "unix"))
SPARK_MASTER = env_str("SPARK_MASTER", "local[*]")

CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
RECONCILE_INTERVAL_S = env_float("RECONCILE_INTERVAL_S", 10.0)
# Replication shell (cluster/services/replication.py): one tick runs every live SPU loop.
REPLICATION_TICK_S = env_float("REPLICATION_TICK_S", 1.0)
REPLICATION_HEARTBEAT_TIMEOUT_S = env_float("REPLICATION_HEARTBEAT_TIMEOUT_S", 3.0)
REPLICATION_ELECTION_TIMEOUT_MS = env_int("REPLICATION_ELECTION_TIMEOUT_MS", 3000, minimum=1)
REPLICATION_LAG_TIME_MAX_MS = env_int("REPLICATION_LAG_TIME_MAX_MS", 10_000, minimum=0)
REPLICATION_MAX_RECORDS_PER_FETCH = env_int("REPLICATION_MAX_RECORDS_PER_FETCH", 0, minimum=0)
REPLICATION_LOG_RETENTION = env_int("REPLICATION_LOG_RETENTION", 10_000, minimum=0)
REPLICATION_LOCK_TIMEOUT_S = env_float("REPLICATION_LOCK_TIMEOUT_S", 60.0)
REPLICATION_SETTLE_TIMEOUT_S = env_float("REPLICATION_SETTLE_TIMEOUT_S", 30.0)
REPLICATION_WORKER_TTL_S = env_int("REPLICATION_WORKER_TTL_S", 5, minimum=2)
REPLICATION_SIMULATED_PRODUCERS = env_bool("REPLICATION_SIMULATED_PRODUCERS", True)
CELERY_BEAT_SCHEDULE = {
    "reconcile-topics": {"task": "cluster.tasks.reconcile_topics",
                         "schedule": RECONCILE_INTERVAL_S},
    # Ticks expire after one interval: a backlog (no worker for a while) is dropped, not replayed.
    "replication-tick": {"task": "cluster.tasks.replication_tick",
                         "schedule": REPLICATION_TICK_S,
                         "options": {"expires": REPLICATION_TICK_S}},
}

# Announce store changes to open pages over Channels (cluster/live.py).
LIVE_UPDATES = env_bool("LIVE_UPDATES", True)
CHANNEL_LAYERS = {"default": {
    "BACKEND": "channels_redis.core.RedisChannelLayer",
    "CONFIG": {"hosts": [REDIS_URL]},
}}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
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
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
}
