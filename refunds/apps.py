from django.apps import AppConfig


class RefundsConfig(AppConfig):
    name = "refunds"

    def ready(self):
        # The delivery log filters by every event type (webhooks stands below refunds).
        from refunds.payloads import EVENT_TYPES
        from webhooks.payloads import event_types_register

        event_types_register(EVENT_TYPES.values())
        # payments may not import refunds (refunds imports payments): it declares a hook for
        # the enquiry's refund totals, and the rule's owner fills it in here.
        from payments.selectors import refund_totals_sql_provide
        from refunds.selectors import refund_totals_sql

        refund_totals_sql_provide(refund_totals_sql)
