"""The quick start's demo merchant: created the first time, given new credentials after."""
import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from gateway import services
from gateway.models import Merchant


class Command(BaseCommand):
    help = "Create (or re-issue the credentials of) the DEMO merchant and print them as JSON."

    def add_arguments(self, parser):
        parser.add_argument("--code", default="DEMO")

    def handle(self, *args, code, **options):
        if settings.IS_PRODUCTION:
            # It prints working credentials and re-issues them for an existing merchant: a
            # quick-start convenience, never for a live system (create_merchant is).
            raise CommandError("demo_merchant is for the quick start and refuses to run in production; "
                               "use create_merchant")
        merchant = Merchant.objects.filter(code=code).first()
        if merchant is None:
            credentials = services.merchant_create(code=code, name="Demo Store", s2s_enabled=True).as_dict()
        else:
            credentials = {
                "merchantId": code,
                "apiKey": services.merchant_rotate_api_key(merchant=merchant, grace_seconds=0),
                "secretKey": services.merchant_rotate_secret_key(merchant=merchant),
                "webhookSecret": services.merchant_rotate_webhook_secret(merchant=merchant),
            }
        self.stdout.write(json.dumps(credentials, indent=2))
