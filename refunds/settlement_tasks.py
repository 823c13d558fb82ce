"""The beat's settlement fetch and reconciliation: thin tasks over refunds.settlements."""
from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from payments.acquirer import get_acquirer
from refunds.settlements import fetching, reconcile

# Acquirers settle T+1 and may restate a day; three days back covers both, and re-reading what
# is stored adds nothing (the fetch is idempotent on the acquirer's ids).
LOOKBACK = timedelta(days=3)
# The reconciliation looks a month back: late settlements and refunds are found as they fall due.
RECONCILE_LOOKBACK = timedelta(days=31)


@shared_task(name="refunds.settlement_tasks.settlements_fetch_task", ignore_result=True)
def settlements_fetch_task() -> int:
    """Fetch the configured acquirer's settlements of the last three days (resuming a walk an
    earlier run left unfinished); returns how many settlements were new."""
    end = timezone.now()
    return fetching.settlements_fetch(get_acquirer(), start=end - LOOKBACK, end=end).settlements_added


@shared_task(name="refunds.settlement_tasks.reconcile_task", ignore_result=True)
def reconcile_task() -> int:
    """The three-way reconciliation over the last month (docs/settlements.md); returns how
    many new exceptions it recorded. Idempotent: a fault is recorded once."""
    now = timezone.now()
    return reconcile.reconcile(start=now - RECONCILE_LOOKBACK, end=now).total
