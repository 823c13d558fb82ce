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

        # The sandbox acquirer reaches its payer's bank, which stands above the payment
        # services, through a hook (payments.acquirer.sandbox.acquirer.payer_bank_provide says why).
        from payments.acquirer.sandbox.acquirer import payer_bank_provide
        from payments.sandbox_upi.approvals import upi_sandbox_approvals_due
        from payments.sandbox_upi.payer import upi_sandbox_request_pending

        payer_bank_provide(request_pending=upi_sandbox_request_pending, approvals_due=upi_sandbox_approvals_due)
