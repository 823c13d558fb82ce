from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps
from django.db.models.signals import post_migrate


class GatewayConfig(AppConfig):
    name = "gateway"
    verbose_name = "Merchant platform"

    def ready(self):
        from django.core import checks

        from gateway import roles, schema  # noqa: F401  schema registers the X-Api-Key scheme with drf-spectacular
        from gateway.clientip import check_proxy_setting
        from gateway.signin import connect_audit_receivers

        # Warns at start (check, migrate) when production has a proxy in front but trusts none.
        checks.register(check_proxy_setting, checks.Tags.security)
        # Every console sign-in, failure and lock-out goes to the audit log.
        connect_audit_receivers()

        # Keeps the console's role groups complete when a later migration adds a permission.
        post_migrate.connect(roles.sync_after_migrate, dispatch_uid="gateway.roles.sync_after_migrate")


class ConsoleAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the console's site: sign-in with a second factor (gateway.signin)."""

    default = False  # named in INSTALLED_APPS; "gateway" alone is GatewayConfig
    default_site = "gateway.signin.ConsoleAdminSite"
