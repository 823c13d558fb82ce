from django.apps import AppConfig


class GatewayConfig(AppConfig):
    name = "gateway"
    verbose_name = "Merchant platform"

    def ready(self):
        from gateway import schema  # noqa: F401  registers the X-Api-Key scheme with drf-spectacular
