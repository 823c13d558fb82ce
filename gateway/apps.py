from django.apps import AppConfig
from django.db.models.signals import post_migrate


class GatewayConfig(AppConfig):
    name = "gateway"
    verbose_name = "Merchant platform"

    def ready(self):
        from django.core import checks

        from gateway import roles, schema  # noqa: F401  schema registers the X-Api-Key scheme with drf-spectacular
        from gateway.clientip import check_proxy_setting

        checks.register(check_proxy_setting, checks.Tags.security)

        # Keeps the console's role groups complete when a later migration adds a permission.
        post_migrate.connect(roles.sync_after_migrate, dispatch_uid="gateway.roles.sync_after_migrate")
