"""`manage.py sandbox_settle --day YYYY-MM-DD [--fault KIND ...] [--statement FILE] [--fee-table]`
(staging only): the sandbox pays out that Indian day's payments now, with the faults asked for
injected into each payout, so that the reconciliation can be shown finding them
(docs/sandbox.md, "Settlements"). --statement writes the bank statement of the day's payouts
(CSV, the columns the reconciliation reads) for finance to upload; --fee-table gives every
merchant paid out the sandbox's rate card as its agreed fees, so that fees are judged."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_date

from payments.acquirer import configured_acquirer_named
from payments.acquirer.sandbox import settlements as sandbox
from payments.models import SandboxSettlement
from refunds.models import MerchantFeeRate


class Command(BaseCommand):
    help = "Staging: the sandbox pays out a day's payments, optionally with faults injected."

    def add_arguments(self, parser):
        parser.add_argument("--day", required=True, help="the Indian date whose payments are paid out (YYYY-MM-DD)")
        parser.add_argument("--fault", action="append", default=[], choices=sandbox.FAULTS,
                            help="inject this fault into each payout (repeatable)")
        parser.add_argument("--statement", metavar="FILE", help="write the day's bank statement CSV here")
        parser.add_argument("--fee-table", action="store_true",
                            help="give each merchant paid out the sandbox's rate card as its fee table")

    def handle(self, *args, day, fault, statement=None, fee_table=False, **options):
        if settings.IS_PRODUCTION:
            raise CommandError("sandbox_settle is for staging: production's settlements come from the acquirer")
        if configured_acquirer_named(sandbox.NAME) is None:
            raise CommandError("the sandbox is not the configured acquirer (GATEWAY_ACQUIRER): it has no payments to pay out")
        when = parse_date(day)
        if when is None:
            raise CommandError(f"--day must be a date as YYYY-MM-DD, not {day!r}")
        made = sandbox.payouts_make(when, faults=tuple(fault))
        start, _ = sandbox.day_bounds(when)
        payouts = made or list(SandboxSettlement.objects.filter(period_start=start).order_by("id"))
        for payout in made:
            self.stdout.write(f"{payout.settlement_id}: UTR {payout.utr}, net {payout.net} paise, "
                              f"faults: {', '.join(payout.faults) or 'none'}")
        if not made:
            self.stdout.write(f"nothing new to pay out for {when}")
        if fee_table:
            for merchant_id in {payout.merchant_id for payout in payouts}:
                for method, (bp, fixed) in sandbox.RATE_CARD.items():
                    MerchantFeeRate.objects.update_or_create(merchant_id=merchant_id, method=method,
                                                             defaults={"percent_bp": bp, "fixed": fixed})
            self.stdout.write("fee tables set to the sandbox's rate card")
        if statement:
            Path(statement).write_bytes(sandbox.payout_statement(payouts))
            self.stdout.write(f"bank statement written to {statement}")
