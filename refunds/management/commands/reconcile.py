"""`manage.py reconcile [--statements DIR] [--since DATE] [--until DATE]`: store the bank
statements dropped in DIR (every *.csv, each file once), then run the three-way
reconciliation (refunds.settlements.reconcile) and print what it found, by kind."""
from __future__ import annotations

from datetime import datetime, time, timedelta
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_date

from refunds.models import BankStatement, ReconException
from refunds.settlements.reconcile import reconcile
from refunds.settlements.statements import StatementInvalid, bank_statement_store


def _day(value: str | None, name: str):
    if value is None:
        return None
    day = parse_date(value)
    if day is None:
        raise CommandError(f"--{name} must be a date as YYYY-MM-DD, not {value!r}")
    return timezone.make_aware(datetime.combine(day, time.min))


class Command(BaseCommand):
    help = "Reconcile settlements with our ledger and the bank statements (docs/settlements.md)."

    def add_arguments(self, parser):
        parser.add_argument("--statements", metavar="DIR",
                            help="a folder of bank statement CSV files (date, amount, utr, narration) to read first")
        parser.add_argument("--since", help="settlements paid, payments and refunds completed, from this date")
        parser.add_argument("--until", help="... up to (not including) the day after this date")

    def handle(self, *args, statements=None, since=None, until=None, **options):
        start, end = _day(since, "since"), _day(until, "until")
        if end is not None:
            end += timedelta(days=1)
        if statements:
            folder = Path(statements)
            if not folder.is_dir():
                raise CommandError(f"--statements {statements!r} is not a folder")
            for path in sorted(folder.glob("*.csv")):
                try:
                    statement, created = bank_statement_store(name=path.name, content=path.read_bytes(),
                                                              source=BankStatement.Source.FOLDER)
                except StatementInvalid as exc:
                    raise CommandError(f"{path.name}: {exc}") from None
                self.stdout.write(f"{path.name}: {'stored' if created else 'already stored'}, "
                                  f"{statement.lines.count()} rows")
        result = reconcile(start=start, end=end)
        labels = dict(ReconException.Kind.choices)
        self.stdout.write(f"settlements matched to a bank credit: {result.bank_matched}")
        for kind, count in result.found.items():
            if count:
                self.stdout.write(f"{count:>8}  {kind}: {labels[kind]}")
        self.stdout.write(f"new exceptions: {result.total} ({result.seconds:.2f} s)")
