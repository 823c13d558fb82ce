from django.apps import AppConfig


class RefundsConfig(AppConfig):
    name = "refunds"

    def ready(self):
        # The delivery log filters by every event type (webhooks stands below refunds): the one
        # thing filled in at start (docs/decisions.md, D16), checked at start by webhooks.
        from refunds.disputes.payloads import EVENT_TYPES as DISPUTE_EVENT_TYPES
        from refunds.payloads import EVENT_TYPES
        from webhooks.payloads import event_types_register

        event_types_register("refunds", [*EVENT_TYPES.values(), *DISPUTE_EVENT_TYPES])
