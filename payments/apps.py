from django.apps import AppConfig


class PaymentsConfig(AppConfig):
    name = "payments"

    def ready(self):
        # The delivery log filters by every event type (webhooks stands below payments).
        from payments.payloads import EVENT_TYPES
        from webhooks.payloads import event_types_register

        event_types_register(EVENT_TYPES.values())

        from gateway.platform import methods
        from payments import acquirer

        # The checkout offers only the methods the configured acquirer carries (Acquirer.methods).
        methods.carried_by(lambda: getattr(acquirer.get_acquirer(), "methods", None))
