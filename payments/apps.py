from django.apps import AppConfig


class PaymentsConfig(AppConfig):
    name = "payments"

    def ready(self):
        from gateway.platform import methods
        from payments import acquirer

        # The checkout offers only the methods the configured acquirer carries (Acquirer.methods).
        methods.carried_by(lambda: getattr(acquirer.get_acquirer(), "methods", None))
