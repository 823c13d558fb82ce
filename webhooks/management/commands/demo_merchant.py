"""The quick start's demo merchant: created the first time, given new credentials after (and
saying so: `credentialsReissued`), and pointed at its webhook inbox unless it already has an
address of its own.

It lives in the webhooks app, beside the inbox it wires the merchant to, because the gateway
app below it must not reach up into webhooks."""
import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from gateway.platform import services
from gateway.platform.management.commands._actor import cli_actor
from gateway.platform.models import Merchant
from webhooks.inbox import merchant_point_to_inbox


class Command(BaseCommand):
    help = ("Create (or re-issue the credentials of) the DEMO merchant, send its webhooks to its inbox, "
            "and print its credentials and addresses as JSON.")

    def add_arguments(self, parser):
        parser.add_argument("--code", default="DEMO")

    def handle(self, *args, code, **options):
        if settings.IS_PRODUCTION:
            # It prints working credentials and re-issues them for an existing merchant: a
            # quick-start convenience, never for a live system (create_merchant is).
            raise CommandError("demo_merchant is for the quick start and refuses to run in production; "
                               "use create_merchant")
        actor = cli_actor(self)
        merchant = Merchant.objects.filter(code=code).first()
        reissued = merchant is not None
        if merchant is None:
            credentials = services.merchant_create(code=code, name="Demo Store", s2s_enabled=True,
                                                   actor=actor).as_dict()
            merchant = Merchant.objects.get(code=code)
        else:
            credentials = {
                "merchantId": code,
                "apiKey": services.merchant_rotate_api_key(merchant=merchant, grace_seconds=0, actor=actor),
                "secretKey": services.merchant_rotate_secret_key(merchant=merchant, actor=actor),
                "webhookSecret": services.merchant_rotate_webhook_secret(merchant=merchant, actor=actor),
            }
        if not merchant.webhook_url and not settings.IS_PRODUCTION:
            merchant_point_to_inbox(merchant=merchant, actor=actor)
            merchant.refresh_from_db()
        # credentialsReissued: the merchant existed, so whatever an earlier run printed is now
        # refused (scripts/quickstart says so rather than leave a newcomer with unexplained 401s).
        self.stdout.write(json.dumps({**credentials, "webhookUrl": merchant.webhook_url,
                                      "credentialsReissued": reissued}, indent=2))
