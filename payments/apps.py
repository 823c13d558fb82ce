from django.apps import AppConfig


class PaymentsConfig(AppConfig):
    name = "payments"

    def ready(self):
        from django.core import checks

        from payments.services.idempotency import check_wait_below_worker_timeout

        # Start-up refuses an X-Idempotency-Key wait that gunicorn's worker timeout would cut short.
        checks.register(check_wait_below_worker_timeout)
        # The configured acquirer's own check of its settings (its package's checks.py).
        from payments.acquirer import check_acquirer_settings

        checks.register(check_acquirer_settings)

        # The delivery log filters by every event type (webhooks stands below payments): the one
        # thing filled in at start (docs/decisions.md, D16), checked at start by webhooks.
        from payments.payloads import EVENT_TYPES
        from webhooks.payloads import event_types_register

        event_types_register("payments", EVENT_TYPES.values())

