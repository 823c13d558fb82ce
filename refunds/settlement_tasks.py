"""The beat's settlement fetch: a thin task over refunds.settlements.fetching."""
from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from payments.acquirer import get_acquirer
from payments.acquirer.cashfree.acquirer import CashfreeAcquirer, client_from_settings
from refunds.settlements import fetching

# Cashfree settles T+1 and may restate a day; three days back covers both, and re-reading
# what is stored adds nothing (the fetch is idempotent on Cashfree's ids).
LOOKBACK = timedelta(days=3)
TIMEOUT_SECONDS = 30.0


@shared_task(name="refunds.settlement_tasks.cashfree_settlements_fetch_task", ignore_result=True)
def cashfree_settlements_fetch_task() -> int:
    """Fetch the last three days' Cashfree settlements; a no-op unless Cashfree is the acquirer."""
    # Ask which acquirer this is by its type, never by spelling its name (tests/acquirers).
    if not isinstance(get_acquirer(), CashfreeAcquirer):
        return 0
    end = timezone.now()
    result = fetching.cashfree_settlements_fetch(client_from_settings(timeout=TIMEOUT_SECONDS),
                                                 start=end - LOOKBACK, end=end)
    return result.settlements_added
