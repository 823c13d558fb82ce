from django.apps import AppConfig


class TokensConfig(AppConfig):
    name = "tokens"
    verbose_name = "Card tokens (beta, staging only)"
