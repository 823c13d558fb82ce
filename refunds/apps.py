from django.apps import AppConfig


class RefundsConfig(AppConfig):
    name = "refunds"

    def ready(self):
        # payments may not import refunds (refunds imports payments): it declares a hook for
        # the enquiry's refund totals, and the rule's owner fills it in here.
        from payments.selectors import refund_totals_sql_provide
        from refunds.selectors import refund_totals_sql

        refund_totals_sql_provide(refund_totals_sql)
