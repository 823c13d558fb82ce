"""The beat's settlement fetch and reconciliation: thin tasks over refunds.settlements."""
import logging
from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from payments.acquirer import acquirer_named, enabled
from payments.acquirer.base import AcquirerError
from refunds.settlements import fetching, reconcile

logger = logging.getLogger(__name__)

# Acquirers settle T+1 and may restate a day; three days back covers both, and re-reading what
# is stored adds nothing (the fetch is idempotent on the acquirer's ids).
LOOKBACK = timedelta(days=3)
# The reconciliation looks a month back: late settlements and refunds are found as they fall due.
RECONCILE_LOOKBACK = timedelta(days=31)


@shared_task(name="refunds.settlement_tasks.settlements_fetch_task", ignore_result=True)
def settlements_fetch_task() -> int:
    """Fetch the settlements of the last three days from every enabled acquirer
    (payments.acquirer.enabled), each resuming the walk its own cursor left unfinished; returns
    how many settlements were new. Each acquirer pays out its own payments, so each is asked:
    one that fails (down, refusing, answering what we cannot read) is logged and left for the
    next run, the others are still fetched, and then the first failure is raised, so that the
    run shows as failed (docs/settlements.md, "Two acquirers")."""
    end = timezone.now()
    added, failures = 0, []
    for name in enabled():
        try:
            added += fetching.settlements_fetch(acquirer_named(name), start=end - LOOKBACK, end=end).settlements_added
        except Exception as exc:  # noqa: BLE001 - one acquirer's fault must not cost the others their fetch
            # What was stored stays; its cursor resumes the walk next run.
            log = logger.warning if isinstance(exc, AcquirerError) else logger.exception
            log("settlements fetch from %s failed: %s", name, exc, extra={"acquirer": name})
            failures.append(exc)
    if failures:
        raise failures[0]
    return added


@shared_task(name="refunds.settlement_tasks.reconcile_task", ignore_result=True)
def reconcile_task() -> int:
    """The three-way reconciliation over the last month (docs/settlements.md); returns how
    many new exceptions it recorded. Idempotent: a fault is recorded once."""
    now = timezone.now()
    return reconcile.reconcile(start=now - RECONCILE_LOOKBACK, end=now).total
