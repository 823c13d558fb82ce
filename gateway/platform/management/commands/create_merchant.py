"""Onboard a merchant: prints one JSON object with its credentials and nothing else."""
import json

from django.core.management.base import BaseCommand, CommandError

from gateway.core.errors import GatewayError
from gateway.platform.management.commands._actor import cli_actor
from gateway.platform.services import merchant_create


class Command(BaseCommand):
    help = "Create a merchant and print its credentials (shown this once) as one JSON object."

    def add_arguments(self, parser):
        parser.add_argument("--code", required=True, help="merchant code (the merchantId)")
        parser.add_argument("--name", required=True)
        parser.add_argument("--webhook-url", default="")
        parser.add_argument("--s2s", action="store_true", help="enable S2S UPI payments")
        parser.add_argument("--rate-limit", type=int, default=None, help="requests per second")
        parser.add_argument("--signed-requests", action="store_true",
                            help="require signed refunds, refund status and enquiry (recommended; docs/security.md)")

    def handle(self, *args, code, name, webhook_url, s2s, rate_limit, signed_requests, **options):
        try:
            credentials = merchant_create(code=code, name=name, webhook_url=webhook_url, s2s_enabled=s2s,
                                          rate_limit=rate_limit, signed_requests_required=signed_requests,
                                          actor=cli_actor(self))
        except GatewayError as exc:
            raise CommandError(exc.message) from None
        # One line of JSON on stdout and nothing else: scripts read it with a JSON parser.
        self.stdout.write(json.dumps(credentials.as_dict()))
