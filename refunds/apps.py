from django.apps import AppConfig


class RefundsConfig(AppConfig):
    name = "refunds"
