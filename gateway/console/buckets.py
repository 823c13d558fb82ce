"""The dashboard's summary of payments, so that the dashboard reads a busy day in milliseconds
(docs/decisions.md D23, docs/performance.md "The dashboard on a busy day").

Payments are counted in buckets WIDTH long (five minutes) by creation time, aligned to the Unix
epoch, and so to IST hours as well (India is UTC+05:30). A beat task (gateway.console.tasks,
every minute) folds each bucket of the last FOLDED once it ended FOLD_MARGIN ago: it stores the
counts, by method and status, of the bucket's payments that are final, and the ids of those still
open. A final status never changes (payments.state.TRANSITIONS), so the counts stay true; a bucket
is folded again once one of its open payments has become final, which keeps its list of ids short.

The dashboard (payment_outcomes) adds up, as of the moment it reads:
- the stored counts of the folded buckets inside its window;
- those buckets' open payments, read by id as they are now;
- every other payment of the window (its first, partial bucket and the buckets not folded yet:
  at least the last FOLD_MARGIN), counted live through the created_at index.
Its figures are therefore exact at the page's load, equal to a direct count over payments,
whether or not the fold has run: with nothing folded it counts the whole day live, as it did
before the summary (slower, never wrong).

Why no payment is missed: a payment enters a bucket only in the transaction that creates it,
stamped with its creation time; FOLD_MARGIN is far longer than such a transaction and than the
clocks of two nodes ever differ, so none arrives in a bucket after its fold. The fold writes
nothing the payments' transactions touch, so it never delays a payment (no counter row that
every payment of a bucket would have to lock in turn).
"""
from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from gateway.console.models import DashboardBucket
from payments import selectors as payment_selectors

WIDTH = timedelta(minutes=5)
FOLD_MARGIN = timedelta(minutes=5)
# The dashboard's window (24 hours) and a bucket more: every full bucket it can read.
FOLDED = timedelta(hours=24) + WIDTH
# Buckets older than this are deleted by the fold.
KEEP = timedelta(hours=48)
ORIGIN = payment_selectors.BUCKET_ORIGIN  # where the buckets of date_bin start


def bucket_floor(moment: datetime) -> datetime:
    """The start of the bucket holding `moment`."""
    return ORIGIN + ((moment - ORIGIN) // WIDTH) * WIDTH


def bucket_ceil(moment: datetime) -> datetime:
    """The start of the first bucket that begins at or after `moment`."""
    floor = bucket_floor(moment)
    return floor if floor == moment else floor + WIDTH


def _ranges(starts: list[datetime]) -> list[tuple[datetime, datetime]]:
    """Sorted bucket starts as [start, end) ranges, adjacent buckets joined."""
    ranges: list[tuple[datetime, datetime]] = []
    for start in sorted(starts):
        if ranges and ranges[-1][1] == start:
            ranges[-1] = (ranges[-1][0], start + WIDTH)
        else:
            ranges.append((start, start + WIDTH))
    return ranges


def dashboard_buckets_fold(now: datetime | None = None) -> int:
    """Fold every bucket of the last FOLDED that ended FOLD_MARGIN before `now` and is not folded
    yet, and fold again each folded one whose open payments include one now final; delete
    buckets older than KEEP. Returns the number of buckets written. Each bucket is written from
    one statement's snapshot, so two folds at once (or a fold beside the dashboard) are harmless:
    the later write wins and both were true."""
    now = now or timezone.now()
    first, horizon = bucket_floor(now - FOLDED), bucket_floor(now - FOLD_MARGIN)
    DashboardBucket.objects.filter(start__lt=now - KEEP).delete()
    stored = dict(DashboardBucket.objects.filter(start__gte=first).values_list("start", "open_ids"))
    final_now = set(payment_selectors.payment_ids_final(ids=[pk for ids in stored.values() for pk in ids]))
    due = [first + step * WIDTH for step in range((horizon - first) // WIDTH) if first + step * WIDTH not in stored]
    due += [start for start, ids in stored.items() if final_now.intersection(ids)]
    if not due:
        return 0
    folded = {start: DashboardBucket(start=start, finals=[], open_ids=[], folded_at=now) for start in due}
    for start, mode, status, count, open_ids in payment_selectors.payment_outcomes_by_bucket(
            ranges=_ranges(due), width=WIDTH):
        if open_ids:  # a status that may still change: counted live, by id
            folded[start].open_ids += open_ids
        else:
            folded[start].finals.append([mode, status, count])
    DashboardBucket.objects.bulk_create(folded.values(), update_conflicts=True, unique_fields=["start"],
                                        update_fields=["finals", "open_ids", "folded_at"])
    return len(folded)


def payment_outcomes(*, since: datetime) -> list[tuple[datetime, str, str, int]]:
    """(bucket start, payment_mode, status, count) of the payments created since `since`,
    exact as of the call (see the module's docstring): the folded buckets' stored counts, their
    open payments by id and the rest of the window live, in two statements."""
    stored = list(DashboardBucket.objects.filter(start__gte=bucket_ceil(since)).order_by("start")
                  .values_list("start", "finals", "open_ids"))
    ranges: list[tuple[datetime, datetime | None]] = []
    cursor = since
    for start, _, _ in stored:
        if start > cursor:
            ranges.append((cursor, start))
        cursor = start + WIDTH
    ranges.append((cursor, None))
    rows = [(start, mode, status, count) for start, finals, _ in stored for mode, status, count in finals]
    live = payment_selectors.payment_outcomes_by_bucket(
        ranges=ranges, width=WIDTH, ids=[pk for _, _, ids in stored for pk in ids])
    return rows + [(start, mode, status, count) for start, mode, status, count, _ in live]
