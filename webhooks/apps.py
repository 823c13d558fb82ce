from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"

    def ready(self):
        from django.core import checks

        from webhooks.payloads import check_event_types

        # The event types the apps above register when ready, checked once they all are.
        checks.register(check_event_types)
