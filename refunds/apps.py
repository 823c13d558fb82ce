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
        # A processor's refund notice arrives at the acquirer's endpoint (payments); refunds
        # applies it.
        from payments.notices.cashfree import refund_notice_apply_provide
        from refunds.notices import refund_notice_apply

        refund_notice_apply_provide(refund_notice_apply)
