"""Re-encrypt every merchant secret under the first key of GATEWAY_ENCRYPTION_KEYS."""
from django.core.management.base import BaseCommand, CommandError

from gateway.management.commands._actor import cli_actor
from gateway.services import secrets_reencrypt


class Command(BaseCommand):
    help = "Re-encrypt merchant secrets with the newest (first) key of GATEWAY_ENCRYPTION_KEYS."

    def handle(self, *args, **options):
        result = secrets_reencrypt(actor=cli_actor(self))
        self.stdout.write(f"re-encrypted the secrets of {result.changed} merchant(s)")
        if result.failed:
            raise CommandError(
                "no key in GATEWAY_ENCRYPTION_KEYS decrypts the secrets of: " + ", ".join(result.failed)
                + ". Put back the key they were encrypted with, or rotate their secrets in the admin.")
