"""Change a merchant's webhook address from the command line, audited as the console's edit is."""
from django.core.management.base import BaseCommand, CommandError

from gateway.core.errors import GatewayError
from gateway.platform.management.commands._actor import cli_actor
from gateway.platform.models import Merchant
from gateway.platform.services import merchant_set_webhook_url
from webhooks.inbox import merchant_point_to_inbox


class Command(BaseCommand):
    help = ("Set a merchant's webhook address: an address, --inbox for the gateway's own webhook inbox "
            "(staging), or --clear to send none. Prints the new address.")

    def add_arguments(self, parser):
        parser.add_argument("code", help="merchant code (the merchantId)")
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("url", nargs="?", help="the new webhook address (http or https)")
        target.add_argument("--inbox", action="store_true",
                            help="the gateway's webhook inbox, a page that shows every delivery (staging only)")
        target.add_argument("--clear", action="store_true", help="send this merchant no webhooks")

    def handle(self, *args, code, url, inbox, clear, **options):
        merchant = Merchant.objects.filter(code=code).first()
        if merchant is None:
            raise CommandError(f"code: no merchant {code}")
        try:
            if inbox:
                address = merchant_point_to_inbox(merchant=merchant, actor=cli_actor(self))
            else:
                address = "" if clear else url
                merchant_set_webhook_url(merchant=merchant, url=address, actor=cli_actor(self))
        except GatewayError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(address or "(no webhook address)")
