"""Settings, read from the environment exactly as CONTRACT.md names them.

Every variable has an embedded default so that `scripts/quickstart` runs with nothing but
Python: SQLite under var/ (GATEWAY_VAR_DIR), a local-memory cache and a file-system Celery broker. Production
(GATEWAY_ENV=production) refuses the development defaults for secrets.
"""
import ipaddress
import os
import sys
from datetime import timedelta
from pathlib import Path

import environ
from cryptography.fernet import Fernet
from csp.constants import NONCE
from django.core.exceptions import ImproperlyConfigured

import payments.acquirer as _acquirers
from gateway.core.phases import every

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

# The quick start's local state: the SQLite file, the file-system broker's folders, beat's
# schedule, collected static files. Ignored by git; another folder keeps two runs apart.
VAR_DIR = Path(env.str("GATEWAY_VAR_DIR", default=str(BASE_DIR / "var"))).resolve()

DEV_SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production-0123456789"
# A Fernet key (urlsafe base64 of 32 bytes) for development only.
DEV_ENCRYPTION_KEY = "ZGV2LW9ubHktZ2F0ZXdheS1lbmNyeXB0aW9uLWtleSE="

GATEWAY_ENV = env.str("GATEWAY_ENV", default="staging")
if GATEWAY_ENV not in ("staging", "production"):
    raise ImproperlyConfigured("GATEWAY_ENV must be 'staging' or 'production'")
IS_PRODUCTION = GATEWAY_ENV == "production"

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default=DEV_SECRET_KEY)
GATEWAY_ENCRYPTION_KEYS = [k.strip() for k in env.list("GATEWAY_ENCRYPTION_KEYS", default=[DEV_ENCRYPTION_KEY])
                           if k.strip()]
if not GATEWAY_ENCRYPTION_KEYS:
    raise ImproperlyConfigured("GATEWAY_ENCRYPTION_KEYS is empty; give at least one Fernet key")
for _position, _key in enumerate(GATEWAY_ENCRYPTION_KEYS, start=1):
    # Refuse a bad key at start rather than on the first merchant secret it should read.
    try:
        Fernet(_key.encode())
    except ValueError:
        raise ImproperlyConfigured(
            f"GATEWAY_ENCRYPTION_KEYS: key {_position} is not a Fernet key (urlsafe base64 of 32 bytes; "
            "make one with `python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'`)"
        ) from None
DEBUG = env.bool("DJANGO_DEBUG", default=False)
if IS_PRODUCTION:
    if SECRET_KEY == DEV_SECRET_KEY:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set in production")
    if DEV_ENCRYPTION_KEY in GATEWAY_ENCRYPTION_KEYS:
        raise ImproperlyConfigured("GATEWAY_ENCRYPTION_KEYS must be set in production")
    if DEBUG:
        raise ImproperlyConfigured("DJANGO_DEBUG must be off in production")

GATEWAY_PUBLIC_URL = env.str("GATEWAY_PUBLIC_URL", default="http://127.0.0.1:8000").rstrip("/")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["*"] if not IS_PRODUCTION else [])
if IS_PRODUCTION and not ALLOWED_HOSTS:
    from urllib.parse import urlsplit

    ALLOWED_HOSTS = [urlsplit(GATEWAY_PUBLIC_URL).hostname]
CSRF_TRUSTED_ORIGINS = [GATEWAY_PUBLIC_URL]
CSRF_FAILURE_VIEW = "gateway.platform.views.csrf_failure"

INSTALLED_APPS = [
    "gateway.console.apps.ConsoleAdminConfig",  # django.contrib.admin, with the console's sign-in
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "axes",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "rest_framework",
    "drf_spectacular",
    # Swagger UI's files, served from our own /static/ rather than a CDN (the docs page's CSP).
    "drf_spectacular_sidecar",
    "gateway.platform",
    "webhooks",
    "payments",
    "refunds",
    "tokens",
    "gateway.console",
]

MIDDLEWARE = [
    "gateway.platform.middleware.TraceIdMiddleware",
    # Times every request by route name for /metrics (gateway.platform.metrics).
    "gateway.platform.metrics.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # The Content-Security-Policy on every HTML page: checkout, sandbox, console, API docs.
    "gateway.platform.middleware.PagePolicyMiddleware",
    # Serves the checkout's CSS and the admin's assets under gunicorn, no proxy needed.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "gateway.platform.middleware.NulCharacterMiddleware",
    "gateway.platform.middleware.SandboxGateMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "gateway.platform.middleware.ApiErrorMiddleware",
    # Last, as django-axes asks: turns a locked-out sign-in into its 429 answer.
    "axes.middleware.AxesMiddleware",
]
APPEND_SLASH = False

ROOT_URLCONF = "gateway.urls"
WSGI_APPLICATION = "gateway.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "gateway.platform.context_processors.gateway",
            ],
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'gateway.sqlite3'}"),
}
# "transaction" when the database is reached through a transaction-mode pooler (below).
DATABASE_POOLER = env.str("DATABASE_POOLER", default="none")
if DATABASE_POOLER not in ("none", "transaction"):
    raise ImproperlyConfigured(f"DATABASE_POOLER must be 'none' or 'transaction' (a transaction-mode pooler such "
                               f"as PgBouncer in front of PostgreSQL), not {DATABASE_POOLER!r}")
if DATABASE_POOLER != "none" and DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured("DATABASE_POOLER=transaction is for PostgreSQL behind PgBouncer; DATABASE_URL is not "
                               "a PostgreSQL address")
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's backend with a health check that costs no round trip (gateway/perf/db/base.py).
    DATABASES["default"]["ENGINE"] = "gateway.perf.db"
    # psycopg 3's pool keeps connections warm across requests in one worker process.
    DATABASES["default"].setdefault("OPTIONS", {})
    # Parameters bound by the server, and a statement run a second time on a connection is
    # prepared: PostgreSQL then skips parsing and planning it, which was most of its CPU on the
    # API's short statements (enquiry's 0.27 ms became 0.08 ms). Django's default, client-side
    # binding and no preparing, exists for transaction-mode PgBouncer: DATABASE_POOLER says so.
    #
    # Behind a transaction-mode pooler (PgBouncer's pool_mode = transaction, deploy/pgbouncer/)
    # each transaction may run on another server connection, so nothing may outlive one:
    # neither a prepared statement nor a server-side cursor (a `.iterator()` outside a
    # transaction declares a cursor WITH HOLD and fetches from it later, perhaps on another
    # server: "cursor _django_curs_... does not exist"). DATABASE_POOLER=transaction turns off
    # both, and refuses DATABASE_PREPARED_STATEMENTS=true beside it.
    _prepared = env.bool("DATABASE_PREPARED_STATEMENTS", default=DATABASE_POOLER == "none")
    if DATABASE_POOLER == "transaction":
        if _prepared:
            raise ImproperlyConfigured("DATABASE_PREPARED_STATEMENTS=true cannot work with DATABASE_POOLER=transaction: "
                                       "a statement prepared on one server connection is missing on the next")
        DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
    if _prepared:
        DATABASES["default"]["OPTIONS"].setdefault("server_side_binding", True)
        DATABASES["default"]["OPTIONS"].setdefault("prepare_threshold", 2)
    if env.bool("DATABASE_POOL", default=False):
        DATABASES["default"]["OPTIONS"]["pool"] = {"min_size": 1, "max_size": 4}
    else:
        DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
elif DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The quick start's web process and Celery worker write to one file at once. SQLite's
    # defaults answer that with "database is locked": a transaction that began by reading
    # cannot upgrade to a write lock while another process writes, and waits for nothing.
    # IMMEDIATE transactions take the write lock up front (Django 5.1+), so a writer waits in
    # line instead of failing; WAL lets readers go on beside the one writer; the busy timeout
    # is how long a writer waits for its turn before giving up.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault("transaction_mode", "IMMEDIATE")
    DATABASES["default"]["OPTIONS"].setdefault("timeout", 20)
    DATABASES["default"]["OPTIONS"].setdefault(
        "init_command", "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
FORMS_URLFIELD_ASSUME_HTTPS = True

REDIS_URL = env.str("REDIS_URL", default="")

# Who may read /metrics (gateway.platform.metrics): a direct request from these networks, or any
# request with `Authorization: Bearer <METRICS_TOKEN>`. The Celery worker serves its own on
# METRICS_WORKER_PORT (unset: none), bound to METRICS_WORKER_ADDRESS.
try:
    METRICS_ALLOWED_IPS = [ipaddress.ip_network(n.strip(), strict=False)
                           for n in env.list("METRICS_ALLOWED_IPS", default=["127.0.0.1/32", "::1/128"]) if n.strip()]
except ValueError as exc:
    raise ImproperlyConfigured(f"METRICS_ALLOWED_IPS must be comma-separated addresses or networks: {exc}") from None
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
if METRICS_TOKEN and len(METRICS_TOKEN) < 32:
    raise ImproperlyConfigured("METRICS_TOKEN must be at least 32 characters (or unset)")
METRICS_WORKER_PORT = env.int("METRICS_WORKER_PORT", default=0)
if not 0 <= METRICS_WORKER_PORT <= 65535:
    raise ImproperlyConfigured("METRICS_WORKER_PORT must be a TCP port (or 0: no worker metrics)")
METRICS_WORKER_ADDRESS = env.str("METRICS_WORKER_ADDRESS", default="127.0.0.1")
if os.environ.get("PROMETHEUS_MULTIPROC_DIR") and not os.path.isdir(os.environ["PROMETHEUS_MULTIPROC_DIR"]):
    raise ImproperlyConfigured("PROMETHEUS_MULTIPROC_DIR must be an existing folder the processes can write")
# Redis trouble must not take payments down (gateway.core.redisguard): every Redis call a request
# makes (cache, rate limit, publishing a task) gives up after this long, and then Redis is left
# alone for REDIS_RETRY_AFTER_SECONDS while its users fail open.
REDIS_TIMEOUT_SECONDS = env.float("REDIS_TIMEOUT_SECONDS", default=0.25)
if not 0 < REDIS_TIMEOUT_SECONDS <= 5:
    raise ImproperlyConfigured("REDIS_TIMEOUT_SECONDS must be more than 0 and at most 5 (seconds): it is how long a "
                               "request may wait for Redis")
REDIS_RETRY_AFTER_SECONDS = env.float("REDIS_RETRY_AFTER_SECONDS", default=1.0)
if not 0 <= REDIS_RETRY_AFTER_SECONDS <= 60:
    raise ImproperlyConfigured("REDIS_RETRY_AFTER_SECONDS must be between 0 and 60 (seconds)")
# The worker's and beat's own connections to the broker: a connect never waits for ever. They
# get no socket (read) timeout: a worker whose consuming connection timed out while Redis was
# hung did not recover when it came back (kombu 5.7 failed closing it, seen in
# tests/gateway/test_redis_outage.py), whereas one that simply waits carries on where it was;
# kombu's health checks (health_check_interval) find a connection that died half-open. A
# request never uses these: it publishes on gateway.core.broker's own, bounded connection.
BROKER_CONNECT_TIMEOUT_SECONDS = 5
if REDIS_URL:
    CACHES = {
        "default": {
            # Django's Redis backend, less a client object per call (gateway/perf/cache.py).
            "BACKEND": "gateway.perf.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", default="gw"),
            # The connection pool's: every cache call is bounded (redis-py waits for ever by
            # default), and a timeout is not retried (gateway.perf.cache, gateway.core.redisguard).
            "OPTIONS": {"socket_timeout": REDIS_TIMEOUT_SECONDS, "socket_connect_timeout": REDIS_TIMEOUT_SECONDS},
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": 3600,
        "socket_connect_timeout": BROKER_CONNECT_TIMEOUT_SECONDS,
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    # A broker that needs no server: messages are files under var/celery.
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT = "gateway.core.filebroker:Transport"  # each message written whole first
    _broker_dir = str(VAR_DIR / "celery" / "messages")
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": _broker_dir,
        "data_folder_out": _broker_dir,
        "processed_folder": str(VAR_DIR / "celery" / "processed"),
        # Broadcasts (worker control, ping) keep their exchange tables here; kombu's default is
        # a `control/` folder in whatever directory the process was started from.
        "control_folder": str(VAR_DIR / "celery" / "control"),
        "store_processed": False,
    }
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True  # a killed worker's task is redelivered, not lost
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Exactly one beat sends the schedule: it must hold a lock in Redis, which lives this long
# unless renewed; a second beat stands by and takes over within this time of the first one's
# end (gateway/core/beatlock.py).
CELERY_BEAT_SCHEDULER = "gateway.core.beatlock:SingleBeatScheduler"
BEAT_LOCK_SECONDS = env.float("BEAT_LOCK_SECONDS", default=15.0)
if not 3 <= BEAT_LOCK_SECONDS <= 300:
    raise ImproperlyConfigured("BEAT_LOCK_SECONDS must be between 3 and 300 (seconds)")
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
# Keep LOGGING's JSON lines in the worker too, instead of Celery's own format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Sweeps: the expiry of payments (payments.services.expiry), and safety nets that pick up
# whatever a lost message or a dead worker left behind. Each at a place of its own in wall-clock
# time (gateway.core.phases, docs/decisions.md D26): the payments sweep on the second, every other
# on half seconds no other entry uses, so no two leave beat together; a new entry takes a free
# one (tests/gateway/test_beat_schedule.py walks the hour and names any collision).
CELERY_BEAT_SCHEDULE = {
    "webhook-deliveries-due": {"task": "webhooks.tasks.deliveries_due_sweep", "schedule": every(5, at=0.5)},
    # A rotated webhook secret is wiped within a minute of its grace period's end.
    "previous-webhook-secrets-forget": {"task": "webhooks.tasks.previous_webhook_secrets_forget",
                                        "schedule": every(60, at=3.5)},
    # Every second; a sweep message still waiting after 30 s is dropped unrun (the ones after
    # it do the same work), so a worker that was stopped for an hour does not come back to
    # 3,600 identical sweeps, while a worker merely busy with a burst still runs one.
    "payments-expire": {"task": "payments.tasks.payments_expire_sweep", "schedule": every(1),
                        "options": {"expires": 30.0}},
    "idempotency-cleanup": {"task": "payments.tasks.idempotency_records_cleanup", "schedule": every(3600, at=61.5)},
    # The out-of-rotation gauge of each acquirer and method (gateway/core/metrics.py), read from the
    # health routing keeps in Redis; every 10 s, well inside the 30 s an acquirer takes to leave.
    "acquirer-rotation": {"task": "payments.tasks.acquirer_rotation_sweep", "schedule": every(10, at=2.5),
                          "options": {"expires": 30.0}},
    "refunds-pending": {"task": "refunds.tasks.refunds_pending_sweep", "schedule": every(30, at=7.5)},
    # The acquirer's settlements of the last three days, hourly (docs/settlements.md); resumable
    # and idempotent.
    "settlements-fetch": {"task": "refunds.settlement_tasks.settlements_fetch_task", "schedule": every(3600, at=121.5)},
    # The three-way reconciliation of the last month, hourly after the fetch; idempotent.
    "settlements-reconcile": {"task": "refunds.settlement_tasks.reconcile_task", "schedule": every(3600, at=181.5)},
    # Staging: the sandbox pays out each Indian day's payments the next morning (docs/sandbox.md).
    "sandbox-payouts": {"task": "payments.tasks.sandbox_payouts_task", "schedule": every(3600, at=241.5)},
    # Late approvals' reversals whose message was lost or whose acquirer call erred.
    # Disputes (docs/disputes.md): stale ones read again and recent payments asked about every
    # 15 minutes (within the processor's rate limit); the 48 h deadline alert checked every
    # minute, well inside its 10-minute margin (refunds.disputes.selectors.ALERT_MARGIN).
    "disputes-sweep": {"task": "refunds.dispute_tasks.disputes_sweep_task", "schedule": every(900, at=4.5)},
    "disputes-deadlines": {"task": "refunds.dispute_tasks.dispute_deadlines_task", "schedule": every(60, at=8.5)},
    "retention-dispute-evidence": {"task": "refunds.dispute_tasks.dispute_evidence_purge_task",
                                   "schedule": every(3600, at=301.5)},
    "reversals-pending": {"task": "payments.tasks.reversals_pending_sweep", "schedule": every(30, at=17.5)},
    # Data retention (gateway/platform/retention.py has the table): each run deletes in short batches.
    "retention-sessions-audit": {"task": "gateway.tasks.gateway_retention_task", "schedule": every(3600, at=361.5)},
    "retention-webhook-history": {"task": "webhooks.tasks.webhook_history_purge_task",
                                  "schedule": every(3600, at=421.5)},
    "retention-sandbox-ledger": {"task": "payments.tasks.sandbox_calls_purge_task", "schedule": every(3600, at=481.5)},
    "retention-acquirer-notices": {"task": "payments.tasks.acquirer_notices_purge_task",
                                   "schedule": every(3600, at=541.5)},
    # Card expiry kept for a token the customer consented to is forgotten once it can no
    # longer become a token (docs/tokens.md).
    "card-consents-purge": {"task": "tokens.tasks.card_consents_purge_task", "schedule": every(3600, at=601.5)},
    # The dashboard's summary of payments (gateway.console.buckets): its figures are exact whether
    # or not this runs; it keeps them cheap on a busy day. Expires like the expiry sweep.
    "console-dashboard-fold": {"task": "gateway.console.tasks.dashboard_buckets_fold_task",
                               "schedule": every(60, at=13.5),
                               "options": {"expires": 60.0}},
}

# Console sign-in (gateway/platform/signin.py, docs/security.md). django-axes: five failed sign-ins (a
# wrong password or code) for one username from one client address (gateway.core.clientip) lock
# that pair for 15 minutes; a successful one resets it. Not the username alone, nor the address
# alone: either let anyone lock any account (or an office behind one address) out (issue 29).
# Guessing one account from many addresses is slowed down instead (CONSOLE_SIGNIN_SLOWDOWN_SECONDS),
# and a signed-in administrator releases a lock from the staff list.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# After AXES_FAILURE_LIMIT failures for one account from anywhere within AXES_COOLOFF_TIME, an
# address that has never signed in to that account may try it once per this many seconds.
CONSOLE_SIGNIN_SLOWDOWN_SECONDS = 10
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "gateway.platform.signin.axes_client_ip"
# Sign-ins are recorded in the project's audit log (gateway.platform.signin); axes keeps only failures.
AXES_DISABLE_ACCESS_LOG = True
AXES_LOCKOUT_TEMPLATE = "admin/console/locked_out.html"
AXES_VERBOSE = False
OTP_TOTP_ISSUER = "Payment gateway console"
# A console session lasts a working day, then staff sign in again.
SESSION_COOKIE_AGE = 9 * 3600

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-in"
TIME_ZONE = "Asia/Kolkata"
# The checkout speaks Hindi and English (payments/checkout/language.py chooses per request);
# the API, its errors and the console stay in English. Message files: locale/, the .po and the
# compiled .mo both kept in git (gateway/core/translations.py refuses production without the .mo).
USE_I18N = True
LANGUAGES = [("en", "English"), ("hi", "हिन्दी")]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_NAME = "checkout_language"
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_HTTPONLY = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
# Without `collectstatic`, WhiteNoise finds files where Django's finders do (quick start, tests);
# a deployment may still run collectstatic for compressed copies.
WHITENOISE_USE_FINDERS = True
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
WHITENOISE_AUTOREFRESH = DEBUG

# Requests larger than this are refused with VALIDATION_ERROR naming the body.
API_MAX_BODY_BYTES = env.int("API_MAX_BODY_BYTES", default=64 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES
# The console's own limit (its pages, under /admin/): a merchant's logo may be 512 KB
# (gateway/platform/brand.py's LOGO_MAX_BYTES) plus the rest of the form; a larger body gets the
# console's HTML page saying so, not the API's JSON envelope.
CONSOLE_MAX_BODY_BYTES = env.int("CONSOLE_MAX_BODY_BYTES", default=1024 * 1024)
if CONSOLE_MAX_BODY_BYTES < 512 * 1024 + API_MAX_BODY_BYTES:
    raise ImproperlyConfigured(
        f"CONSOLE_MAX_BODY_BYTES={CONSOLE_MAX_BODY_BYTES} cannot carry the console's 512 KB logo upload "
        f"with its form; give at least {512 * 1024 + API_MAX_BODY_BYTES}")

# Dispute evidence (docs/disputes.md): the largest file, which POST /api/v2/disputes/{id}/evidence
# and the console's dispute page take above their own body limits, and where the files are kept:
# under var/ by default, outside the static and template folders, served by no route.
DISPUTE_EVIDENCE_MAX_BYTES = env.int("DISPUTE_EVIDENCE_MAX_BYTES", default=4 * 1024 * 1024)
DISPUTE_EVIDENCE_DIR = Path(env.str("DISPUTE_EVIDENCE_DIR", default=str(VAR_DIR / "dispute-evidence"))).resolve()
# An uploaded file up to that size stays in memory (never a temporary file outside var/).
FILE_UPLOAD_MAX_MEMORY_SIZE = max(DISPUTE_EVIDENCE_MAX_BYTES + 64 * 1024, 2621440)

# Request timestamps may run this far ahead of our clock before they count as "future".
REQUEST_CLOCK_SKEW_SECONDS = env.int("REQUEST_CLOCK_SKEW_SECONDS", default=30)
REQUEST_MAX_AGE_SECONDS = 300

# gunicorn's worker timeout (gunicorn.conf.py takes it from here): a web worker silent this long
# is killed with the request it was answering. The longest request is an X-Idempotency-Key
# waiter: IDEMPOTENCY_WAIT_SECONDS for the first request's answer, then, should that request
# have died, taking the key over and calling the acquirer (up to CALL_TIME_LIMIT, 60 s).
# Start-up refuses a wait that leaves less than that (payments.E001,
# payments.services.idempotency.check_wait_below_worker_timeout).
WEB_WORKER_TIMEOUT_SECONDS = env.int("WEB_WORKER_TIMEOUT_SECONDS", default=120)
IDEMPOTENCY_WAIT_SECONDS = env.float("IDEMPOTENCY_WAIT_SECONDS", default=30)

# How long a web process reuses an API key and its merchant it read from the database
# (gateway.platform.auth): a key revoked or a merchant deactivated in another process is refused within
# this many seconds. 0 reads them on every request.
API_KEY_CACHE_SECONDS = env.float("API_KEY_CACHE_SECONDS", default=1.0)

# Per-merchant API rate limit in requests per second, unless the merchant has its own.
DEFAULT_RATE_LIMIT_PER_SECOND = env.int("DEFAULT_RATE_LIMIT_PER_SECOND", default=50)

CHECKOUT_SESSION_TTL_SECONDS = env.int("CHECKOUT_SESSION_TTL_SECONDS", default=1800)
# How long the checkout's result page shows the outcome before it takes the customer to the
# merchant's returnUrl (its button goes at once). 0 to 60: longer leaves a customer waiting.
CHECKOUT_RESULT_REDIRECT_SECONDS = env.int("CHECKOUT_RESULT_REDIRECT_SECONDS", default=5)
if not 0 <= CHECKOUT_RESULT_REDIRECT_SECONDS <= 60:
    raise ImproperlyConfigured("CHECKOUT_RESULT_REDIRECT_SECONDS must be 0 to 60 seconds")
# How often one checkout session, and one attempt of it, may ask the acquirer (UPI requests,
# method starts, the bank-transfer page, returns from the acquirer's pages): past either the
# customer sees a calm page and no call is made (payments.services.call_budget, issue 28).
CHECKOUT_ACQUIRER_CALLS_PER_SESSION = env.int("CHECKOUT_ACQUIRER_CALLS_PER_SESSION", default=20)
CHECKOUT_ACQUIRER_CALLS_PER_ATTEMPT = env.int("CHECKOUT_ACQUIRER_CALLS_PER_ATTEMPT", default=6)
# How long a checkout page reuses the acquirer's answer about an attempt instead of asking
# again (docs/going-live.md, "The processor's limits", says why this long).
CHECKOUT_ACQUIRER_ANSWER_SECONDS = env.int("CHECKOUT_ACQUIRER_ANSWER_SECONDS", default=120)
if min(CHECKOUT_ACQUIRER_CALLS_PER_SESSION, CHECKOUT_ACQUIRER_CALLS_PER_ATTEMPT, CHECKOUT_ACQUIRER_ANSWER_SECONDS) < 1:
    raise ImproperlyConfigured("CHECKOUT_ACQUIRER_CALLS_PER_SESSION, CHECKOUT_ACQUIRER_CALLS_PER_ATTEMPT and "
                               "CHECKOUT_ACQUIRER_ANSWER_SECONDS must be at least 1")
# Proxies in front of the service that append the client's address to X-Forwarded-For; per-address
# limits count the address the outermost one wrote (gateway.core.clientip). 0: REMOTE_ADDR, header ignored.
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
SANDBOX_UPI_SUCCESS_DELAY_SECONDS = env.float("SANDBOX_UPI_SUCCESS_DELAY_SECONDS", default=5)
SANDBOX_UPI_TIMEOUT_SECONDS = env.int("SANDBOX_UPI_TIMEOUT_SECONDS", default=900)
# Staging: a refund of exactly this many paise is rejected by the sandbox bank (docs/sandbox.md).
SANDBOX_REFUND_FAILURE_AMOUNT = env.int("SANDBOX_REFUND_FAILURE_AMOUNT", default=100013)
# The gateway's collection VPA, the `pa` of every UPI link.
UPI_PAYEE_VPA = env.str("UPI_PAYEE_VPA", default="gateway@sandbox")
# Refunds: the smallest refund (unless less remains), and how long a submission to the bank
# may run before the sweep sends the refund again.
REFUND_MIN_AMOUNT = env.int("REFUND_MIN_AMOUNT", default=100)
REFUND_CLAIM_SECONDS = env.int("REFUND_CLAIM_SECONDS", default=60)
REFUND_PENDING_SWEEP_AFTER_SECONDS = env.int("REFUND_PENDING_SWEEP_AFTER_SECONDS", default=60)
# Seconds between delivery attempts after a failed one; the delivery is dead after the last.
# 10s, 1m, 5m, 30m, 2h, 6h, 12h, 24h: first retry within 10 s, 44h36m in all.
WEBHOOK_RETRY_SCHEDULE = env.list(
    "WEBHOOK_RETRY_SCHEDULE", cast=int, default=[10, 60, 300, 1800, 7200, 21600, 43200, 86400]
)
WEBHOOK_TIMEOUT_SECONDS = 10
# Development and tests may deliver to loopback and private addresses; production may not.
WEBHOOK_ALLOW_PRIVATE_ADDRESSES = env.bool("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", default=not IS_PRODUCTION)
# That covers addresses staff set (the merchant's, the webhook inbox's). An address that arrives
# in an API request (S2S webhookUrl) is held to public addresses everywhere; tests whose
# receivers listen on loopback turn this on (settings only, no variable; refused and ignored in
# production: gateway.E011, gateway.core.urlcheck.private_allowed).
WEBHOOK_REQUEST_ADDRESSES_MAY_BE_PRIVATE = False

# The acquirer used for payments (payments.acquirer.get_acquirer): a name of the table of
# implementations (payments.acquirer.IMPLEMENTATIONS, the only list of them). Staging defaults to
# the simulator, which moves no money and is refused in production; Cashfree carries real
# payments, and so does Razorpay (docs/going-live.md).
GATEWAY_ACQUIRER = env.str("GATEWAY_ACQUIRER", default="" if IS_PRODUCTION else _acquirers.staging_default())
# Who collects card numbers on the hosted checkout (issue 28, docs/security.md): `processor`, the
# processor's own fields inside our page, so the number goes from the browser to it and never
# reaches this process (production's default); `own`, our card form, whose numbers this process
# receives and sends on (order pay): full PCI DSS scope, so production takes it only beside the
# operator's declaration PCI_DSS_COMPLIANT=true. Staging's default is `own`: the sandbox moves no
# money and the contract's card inputs drive it (CONTRACT.md).
CARD_FORM_MODES = ("processor", "own")
CARD_FORM_MODE = env.str("CARD_FORM_MODE", default="processor" if IS_PRODUCTION else "own")
if CARD_FORM_MODE not in CARD_FORM_MODES:
    raise ImproperlyConfigured(f"CARD_FORM_MODE must be 'processor' or 'own', not {CARD_FORM_MODE!r}")
PCI_DSS_COMPLIANT = env.bool("PCI_DSS_COMPLIANT", default=False)
if IS_PRODUCTION and CARD_FORM_MODE == "own" and not PCI_DSS_COMPLIANT:
    raise ImproperlyConfigured(
        "CARD_FORM_MODE=own sends card numbers through this service, which only a PCI DSS compliant operator may "
        "do: set PCI_DSS_COMPLIANT=true to declare it, or leave CARD_FORM_MODE at 'processor'")
# Cashfree: the merchant account's API keys; webhooks are signed with the client secret unless
# Cashfree gave a separate secret; its production or sandbox address by environment (a test
# points it at a double).
CASHFREE_CLIENT_ID = env.str("CASHFREE_CLIENT_ID", default="")
CASHFREE_CLIENT_SECRET = env.str("CASHFREE_CLIENT_SECRET", default="")
CASHFREE_WEBHOOK_SECRET = env.str("CASHFREE_WEBHOOK_SECRET", default="") or CASHFREE_CLIENT_SECRET
CASHFREE_BASE_URL = env.str("CASHFREE_BASE_URL", default=(
    "https://api.cashfree.com/pg" if IS_PRODUCTION else "https://sandbox.cashfree.com/pg")).rstrip("/")
# Cashfree.js v3, the script whose card components are the checkout's card fields in
# CARD_FORM_MODE=processor (docs/security.md lists it). Cashfree's own address; production refuses
# any other (payments.acquirer.cashfree.checks), and the tests point staging at a local stand-in
# with the same interface (tests/acquirer_cashfree/cashfree_js/), since this one cannot be fetched.
CASHFREE_JS_URL = env.str("CASHFREE_JS_URL", default="https://sdk.cashfree.com/js/v3/cashfree.js")
# Every call to Cashfree ends within this (payments.acquirer.base.CALL_TIME_LIMIT is 60 s).
CASHFREE_TIMEOUT_SECONDS = env.float("CASHFREE_TIMEOUT_SECONDS", default=10)
# Razorpay: the account's API key (id and secret: HTTP Basic on every call; the secret is never
# logged), the secret set beside the webhook address in Razorpay's dashboard (X-Razorpay-Signature),
# and its address, the same for test and live keys (a test points it at a double).
RAZORPAY_KEY_ID = env.str("RAZORPAY_KEY_ID", default="")
RAZORPAY_KEY_SECRET = env.str("RAZORPAY_KEY_SECRET", default="")
RAZORPAY_WEBHOOK_SECRET = env.str("RAZORPAY_WEBHOOK_SECRET", default="")
RAZORPAY_BASE_URL = env.str("RAZORPAY_BASE_URL", default="https://api.razorpay.com/v1").rstrip("/")
# Razorpay Standard Checkout, which draws Razorpay's own card frame (CARD_FORM_MODE=processor).
RAZORPAY_CHECKOUT_JS_URL = env.str("RAZORPAY_CHECKOUT_JS_URL", default="https://checkout.razorpay.com/v1/checkout.js")
# Every call to Razorpay ends within this (payments.acquirer.base.CALL_TIME_LIMIT is 60 s).
RAZORPAY_TIMEOUT_SECONDS = env.float("RAZORPAY_TIMEOUT_SECONDS", default=10)
# The configured acquirer's own check of its settings (its package's checks.py): a start-up that
# accepts a setting it cannot honour is refused here, before a worker takes a request.
# Every acquirer a merchant's route may name (issue 33: routing and failover), the configured one
# first: each is checked as the configured one is, and its notices are taken at its inbound door.
GATEWAY_ACQUIRERS = list(dict.fromkeys(
    [GATEWAY_ACQUIRER, *(name for name in env.list("GATEWAY_ACQUIRERS", default=[]) if name)]))
_acquirer_problems = [problem for name in GATEWAY_ACQUIRERS
                      for problem in _acquirers.settings_problems(name, sys.modules[__name__])]
if _acquirer_problems:
    raise ImproperlyConfigured(_acquirer_problems[0])

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["gateway.platform.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["gateway.platform.auth.IsMerchant"],
    "DEFAULT_THROTTLE_CLASSES": ["gateway.platform.ratelimit.MerchantRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["gateway.core.parsers.GatewayJSONParser"],
    "EXCEPTION_HANDLER": "gateway.core.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Payment Gateway API",
    "DESCRIPTION": "Merchant-facing interface, version 2.4.0. Amounts are integer paise.",
    "VERSION": "2.4.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # OpenAPI 3.0.3 (3.1's JSON Schema counts 100.0 as an integer, which the API refuses where
    # paise belong); request bodies closed to unknown keys (gateway.platform.schema).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "gateway.platform.schema.request_bodies_closed"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Content-Security-Policy (django-csp 4), on every HTML page (gateway.platform.middleware.PagePolicyMiddleware;
# the console and the API docs page also allow inline styles, which the admin's templates use).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        # NONCE: the one inline <style> of a page, the merchant's accent colour (templates/checkout/base.html).
        "style-src": ["'self'", NONCE],
        "script-src": ["'self'"],
        "form-action": ["'self'", "http:", "https:"],
        "frame-ancestors": ["'none'"],
        "base-uri": ["'none'"],
    }
}

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
if IS_PRODUCTION:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # TLS ends at the proxy in front (README): it must set X-Forwarded-Proto, overwriting any a
    # client sent. Plain HTTP is redirected to HTTPS, except the health check, which load
    # balancers and orchestrators probe over plain HTTP inside the network.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^livez$", r"^readyz$"]
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=365 * 24 * 3600)
    if not GATEWAY_PUBLIC_URL.startswith("https://"):
        raise ImproperlyConfigured("GATEWAY_PUBLIC_URL must be an https:// address in production")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"trace": {"()": "gateway.core.logging.TraceFilter"}},
    "formatters": {"json": {"()": "gateway.core.logging.JsonFormatter"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "json", "filters": ["trace"]},
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.request": {"level": "ERROR"},
        "django.server": {"level": "WARNING"},
    },
}
