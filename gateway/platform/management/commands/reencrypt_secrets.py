"""Re-encrypt every merchant secret, and every checkout session secret kept for an idempotent
replay, under the first key of GATEWAY_ENCRYPTION_KEYS."""
from django.core.management.base import BaseCommand, CommandError

from gateway.platform.management.commands._actor import cli_actor
from gateway.platform.services import secrets_reencrypt


class Command(BaseCommand):
    help = "Re-encrypt merchant secrets with the newest (first) key of GATEWAY_ENCRYPTION_KEYS."

    def handle(self, *args, **options):
        # An entry point, like the root URLconf: it may reach every app that keeps a secret.
        from payments.services.hosted.creation import hosted_replay_secrets_reencrypt

        result = secrets_reencrypt(actor=cli_actor(self))
        self.stdout.write(f"re-encrypted the secrets of {result.changed} merchant(s)")
        sessions, unreadable = hosted_replay_secrets_reencrypt()
        self.stdout.write(f"re-encrypted {sessions} checkout session secret(s) kept for idempotent replays"
                          + (f"; {unreadable} no key decrypts (they expire within 24 hours)" if unreadable else ""))
        if result.failed:
            raise CommandError(
                "no key in GATEWAY_ENCRYPTION_KEYS decrypts the secrets of: " + ", ".join(result.failed)
                + ". Put back the key they were encrypted with, or rotate their secrets in the admin.")
