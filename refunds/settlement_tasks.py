"""The beat's settlement fetch: a thin task over refunds.settlements.fetching."""
from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from payments.acquirer import get_acquirer
from refunds.settlements import fetching

# Acquirers settle T+1 and may restate a day; three days back covers both, and re-reading what
# is stored adds nothing (the fetch is idempotent on the acquirer's ids).
LOOKBACK = timedelta(days=3)


@shared_task(name="refunds.settlement_tasks.settlements_fetch_task", ignore_result=True)
def settlements_fetch_task() -> int:
    """Fetch the configured acquirer's settlements of the last three days (resuming a walk an
    earlier run left unfinished); returns how many settlements were new."""
    end = timezone.now()
    return fetching.settlements_fetch(get_acquirer(), start=end - LOOKBACK, end=end).settlements_added
