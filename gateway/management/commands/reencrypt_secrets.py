"""Re-encrypt every merchant secret under the first key of GATEWAY_ENCRYPTION_KEYS."""
from django.core.management.base import BaseCommand

from gateway.services import secrets_reencrypt


class Command(BaseCommand):
    help = "Re-encrypt merchant secrets with the newest (first) key of GATEWAY_ENCRYPTION_KEYS."

    def handle(self, *args, **options):
        changed = secrets_reencrypt()
        self.stdout.write(f"re-encrypted the secrets of {changed} merchant(s)")
