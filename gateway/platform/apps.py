from django.apps import AppConfig
from django.db.models.signals import post_migrate


class GatewayConfig(AppConfig):
    """The merchant platform: merchants, their keys, the audit log, staff roles. Its label stays
    "gateway" (the app's tables, migrations and permissions are named by it)."""

    name = "gateway.platform"
    label = "gateway"
    verbose_name = "Merchant platform"

    def ready(self):
        from django.core import checks

        from gateway.platform import roles, schema  # noqa: F401  schema registers the X-Api-Key scheme with drf-spectacular
        from gateway.core.clientip import check_proxy_setting
        from gateway.core.translations import check_compiled_catalogues
        from gateway.platform.signin import connect_audit_receivers

        # Warns at start (check, migrate) when production has a proxy in front but trusts none.
        checks.register(check_proxy_setting, checks.Tags.security)
        # Refuses a production start that would show English under a Hindi label (no catalogue).
        checks.register(check_compiled_catalogues, checks.Tags.translation)
        # Warns at start about what staging's defaults open up (published keys, any Host, private
        # webhook addresses), and refuses the tests' private-webhookUrl setting in production.
        from gateway.platform.checks import check_exposure

        checks.register(check_exposure, checks.Tags.security)
        # Every console sign-in, failure and lock-out goes to the audit log.
        connect_audit_receivers()

        # Keeps the console's role groups complete when a later migration adds a permission.
        post_migrate.connect(roles.sync_after_migrate, dispatch_uid="gateway.platform.roles.sync_after_migrate")
