"""Start-up warnings (Django system checks, shown by `manage.py check`, `migrate` and
`runserver`) for settings that open the service wider than production would, each saying what
it allows. Staging starts with all of them by default: its development keys are published in
this repository, it answers any Host, and its workers may POST to private networks."""
from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Warning


def check_exposure(app_configs=None, **kwargs):
    """gateway.W011 to W015 (warnings), gateway.E011 and, in production, E016 and E017 (errors)."""
    found = []
    if settings.SECRET_KEY == settings.DEV_SECRET_KEY:
        found.append(Warning(
            "DJANGO_SECRET_KEY is the development key published in this repository: anyone can forge what Django "
            "signs with it (password-reset links for console staff, signed cookies and CSRF tokens).",
            hint="Set DJANGO_SECRET_KEY to a long random value on any server others can reach "
                 "(production refuses to start without one).",
            id="gateway.W011"))
    if settings.DEV_ENCRYPTION_KEY in settings.GATEWAY_ENCRYPTION_KEYS:
        found.append(Warning(
            "GATEWAY_ENCRYPTION_KEYS holds the development key published in this repository: anyone with a copy "
            "of the database (a backup, a dump) can decrypt every merchant's secret key and webhook secret, and "
            "sign API requests and webhooks as them.",
            hint="Set GATEWAY_ENCRYPTION_KEYS to a Fernet key of your own, then run `manage.py reencrypt_secrets`.",
            id="gateway.W012"))
    if "*" in settings.ALLOWED_HOSTS:
        found.append(Warning(
            "ALLOWED_HOSTS contains '*': requests naming any host in their Host header are served, so a cache or "
            "a link built from the request's host (the console's password-reset mail, redirects) can be pointed "
            "at a host of an attacker's choosing.",
            hint="Name the service's hosts in DJANGO_ALLOWED_HOSTS (comma-separated).",
            id="gateway.W013"))
    if settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES:
        found.append(Warning(
            "WEBHOOK_ALLOW_PRIVATE_ADDRESSES is on: the webhook workers POST to loopback, private, link-local and "
            "carrier-grade NAT addresses when staff set one as a merchant's webhook address (and to the webhook "
            "inbox), so they can reach services on this host and its network. Addresses that arrive in an API "
            "request (S2S webhookUrl) are held to public addresses regardless.",
            hint="Leave it off (production's default) unless staff must test against receivers on a private "
                 "network.",
            id="gateway.W014"))
    if settings.IS_PRODUCTION:
        found.extend(production_shared_services())
    if getattr(settings, "WEBHOOK_REQUEST_ADDRESSES_MAY_BE_PRIVATE", False):
        if settings.IS_PRODUCTION:
            found.append(Error(
                "WEBHOOK_REQUEST_ADDRESSES_MAY_BE_PRIVATE is for tests: it lets a webhookUrl sent in an API request "
                "reach loopback and private addresses, so anyone holding a merchant's API key could aim the "
                "workers at internal services. Production refuses it (and ignores it).",
                hint="Remove it from the settings.", id="gateway.E011"))
        else:
            found.append(Warning(
                "WEBHOOK_REQUEST_ADDRESSES_MAY_BE_PRIVATE is on (a setting for tests): a webhookUrl sent in an API "
                "request may reach loopback and private addresses, so any holder of a merchant's API key can make "
                "the workers POST into this network.",
                hint="Turn it on only in tests that run receivers on loopback.", id="gateway.W015"))
    return found


def production_shared_services() -> list[Error]:
    """What a production start needs that the quick start does without (issue 28): a database
    and a Redis every node shares. Errors, not warnings: a start that goes on without them takes
    payments it cannot keep straight across processes."""
    found = []
    if settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
        found.append(Error(
            "DATABASE_URL is unset or names SQLite in production: a file on one node, which other nodes cannot "
            "share, and which takes one write at a time, so every payment, webhook and refund of every merchant "
            "queues behind the last.",
            hint="Set DATABASE_URL to PostgreSQL (postgres://...), the supported database.", id="gateway.E017"))
    if not settings.REDIS_URL or "locmem" in settings.CACHES["default"]["BACKEND"].lower() \
            or settings.CELERY_BROKER_URL.startswith("filesystem:"):
        found.append(Error(
            "REDIS_URL is unset in production: the Celery broker is a folder on this node (a worker on another "
            "node never sees its tasks: webhooks, refunds and expiries wait for a sweep or are lost with the "
            "disk), the cache is each process's own memory, so a signed refund's checksum is remembered only by "
            "the process that took it (another process accepts it again within its 5 minutes), and rate limits "
            "count per process.",
            hint="Set REDIS_URL to the Redis every web and worker node shares.", id="gateway.E016"))
    return found
