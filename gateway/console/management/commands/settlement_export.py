"""Write one merchant's settlement CSV for one IST calendar day (docs/console.md): to stdout,
or to --output FILE with a one-line summary on stdout. Recorded in the audit log."""
import json
from datetime import date

from django.core.management.base import BaseCommand, CommandError

from gateway.console.kit.days import today
from gateway.console.settlement import settlement_totals, settlement_write
from gateway.platform.management.commands._actor import cli_actor
from gateway.platform.models import Merchant
from gateway.platform.services import audit_record


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--date must be a day written YYYY-MM-DD, not {value!r}") from None


class Command(BaseCommand):
    help = ("Settlement CSV of one merchant for one calendar day in India (IST): successful payments by "
            "completion time, processed refunds by processing time, and the net, in paise and rupees.")

    def add_arguments(self, parser):
        parser.add_argument("--merchant", required=True, help="merchant code (the merchantId)")
        parser.add_argument("--date", required=True, help="the IST calendar day, YYYY-MM-DD")
        parser.add_argument("--output", default="", help="file to write; default: standard output")

    def handle(self, *args, merchant, date, output, **options):
        day = _day(date)
        if day > today():
            raise CommandError(f"{day} has not begun yet in India")
        found = Merchant.objects.filter(code=merchant).first()
        if found is None:
            raise CommandError(f"no merchant with code {merchant!r}")
        audit_record(actor=cli_actor(self), action="settlement.export", obj=found, merchant=found,
                     after={"date": day.isoformat(), "output": output or "stdout",
                            **settlement_totals(found, day).as_dict()})
        if not output:
            settlement_write(self.stdout, found, day)
            return
        with open(output, "w", newline="", encoding="utf-8") as file:
            totals = settlement_write(file, found, day)
        self.stdout.write(json.dumps({"output": output, "merchantId": found.code, "date": day.isoformat(),
                                      **totals.as_dict()}))
