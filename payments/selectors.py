"""Every read of payments. API reads are scoped to one merchant: another merchant's payment
answers NOT_FOUND exactly as a payment that does not exist."""
from __future__ import annotations

import hmac

from gateway.core.errors import NotFound
from gateway.platform.models import Merchant
from payments import writes
from payments.models import Payment


def payment_get_for_merchant(*, merchant: Merchant, merchant_txn_id: str) -> Payment:
    """The merchant's payment (either flow) with that merchantTxnId. Raises NotFound."""
    payment = Payment.objects.filter(merchant=merchant, merchant_txn_id=merchant_txn_id).first()
    if payment is None:
        raise NotFound(NOT_FOUND_MESSAGE)
    return payment


NOT_FOUND_MESSAGE = "no payment with that merchantTxnId"


def payment_get_for_enquiry(*, merchant: Merchant, merchant_txn_id: str) -> Payment:
    """payment_get_for_merchant for the enquiry, the API's hottest read: one row, with its
    refund totals in it (Payment.refunded_amount, Payment.refund_pending_amount), read by one
    hand-written statement, since compiling a queryset costs more CPU than PostgreSQL spends
    answering it (gateway/perf/sql.py; the statement is in payments.writes). Raises NotFound."""
    payment = writes.payment_get_by_merchant_txn_id(merchant=merchant, merchant_txn_id=merchant_txn_id)
    if payment is None:
        raise NotFound(NOT_FOUND_MESSAGE)
    return payment


def payment_get_for_checkout(*, payment_id: str, client_secret: str | None) -> Payment | None:
    """The hosted payment `payment_id` if `client_secret` is its session secret, else None.
    Compared in constant time against the stored SHA-256, so the answer's timing says nothing
    about how close a guess was."""
    from payments.lookups import client_secret_hash

    if not client_secret or len(client_secret) > 200:
        return None
    payment = (Payment.objects.select_related("merchant")
               .filter(payment_id=payment_id, flow=Payment.Flow.HOSTED).first())
    expected = payment.client_secret_hash if payment is not None else "0" * 64
    if not hmac.compare_digest(expected, client_secret_hash(client_secret)) or payment is None:
        return None
    return payment


def payment_get_hosted(*, payment_id: str) -> Payment:
    """A hosted payment by its paymentId, for pages that already checked the customer's access.
    Raises NotFound."""
    payment = (Payment.objects.select_related("merchant")
               .filter(payment_id=payment_id, flow=Payment.Flow.HOSTED).first())
    if payment is None:
        raise NotFound()
    return payment


# --- the support console's reads (gateway.console) -------------------------------------------
# Appended here so the console never reads payments' models itself. Staff see every merchant:
# these are not scoped to one. (Their imports stand here, with them.)

from datetime import datetime, timedelta  # noqa: E402
from datetime import timezone as dt_timezone  # noqa: E402

from django.contrib.postgres.aggregates import ArrayAgg  # noqa: E402
from django.db.models import Count, DateTimeField, DurationField, F, Func, Q, Value  # noqa: E402

import re  # noqa: E402

from payments.lookups import (  # noqa: E402
    PHONE_KEY_DIGITS,
    AnyOfIds,
    email_key,
    email_key_expression,
    phone_key,
    phone_key_expression,
)
from payments.models import Reversal  # noqa: E402

# The longest merchantTxnId: a search term longer than this cannot be one.
MERCHANT_TXN_ID_MAX_LENGTH = Payment._meta.get_field("merchant_txn_id").max_length


# The customer's email and phone, as the console's search takes them (gateway.console.search):
# each an exact lookup on the normalised key the payments table indexes (payments.lookups).
PHONE = re.compile(r"\+?[0-9 ().-]+")


def payment_contact_conditions(term: str) -> list[tuple[str, Q]]:
    """The customer identifiers `term` can be, ("customer email" or "customer phone", its exact
    lookup), for a queryset passed through payments_searchable."""
    found = []
    if "@" in term and " " not in term:
        found.append(("customer email", Q(_email_key=email_key(term))))
    if PHONE.fullmatch(term) and len(phone_key(term)) == PHONE_KEY_DIGITS and phone_key(term).isdigit():
        found.append(("customer phone", Q(_phone_key=phone_key(term))))
    return found


def payments_searchable(queryset):
    """`queryset` (of payments) with the keys payment_contact_conditions look up."""
    return queryset.alias(_email_key=email_key_expression(), _phone_key=phone_key_expression())


def payment_contact_matched(payment: Payment, term: str) -> str | None:
    """Which of the customer's identifiers of `payment` the term is, or None."""
    if payment.customer_email and email_key(payment.customer_email) == email_key(term):
        return "customer email"
    if payment.customer_phone and phone_key(payment.customer_phone) == phone_key(term):
        return "customer phone"
    return None


def payment_pks_where(condition):
    """The primary keys of the payments `condition` (a Q over Payment's fields) matches."""
    return list(Payment.objects.filter(condition).values_list("pk", flat=True))


def payment_outcomes_by_bucket(*, ranges, width: timedelta, ids=()) -> list[tuple[datetime, str, str, int, list]]:
    """(bucket start, payment_mode, status, count, ids if the status is open) of the payments
    created in any of `ranges` (each (start, end): start <= created_at < end, end None for no
    bound) or whose id is in `ids`, by creation time in buckets `width` long aligned to the Unix
    epoch (`date_bin`). The ids come only for statuses that may still change (PENDING,
    PROCESSING); one statement, so counts and ids are one snapshot. Reads the created_at index
    for the ranges and the primary key for the ids."""
    condition = Q()
    for start, end in ranges:
        condition |= Q(created_at__gte=start, created_at__lt=end) if end else Q(created_at__gte=start)
    if ids:
        condition |= Q(AnyOfIds(F("pk"), ids))
    if not condition:
        return []
    bucket = Func(Value(width, output_field=DurationField()), F("created_at"),
                  Value(BUCKET_ORIGIN, output_field=DateTimeField()), function="date_bin",
                  output_field=DateTimeField())
    return [(start, mode, status, n, open_ids or [])
            for start, mode, status, n, open_ids in Payment.objects.filter(condition).order_by()
            .annotate(bucket=bucket).values_list("bucket", "payment_mode", "status")
            .annotate(n=Count("id"), open_ids=ArrayAgg("id", filter=~Q(status__in=Payment.FINAL_STATUSES)))
            .values_list("bucket", "payment_mode", "status", "n", "open_ids")]


BUCKET_ORIGIN = datetime(1970, 1, 1, tzinfo=dt_timezone.utc)


def payment_ids_final(*, ids) -> list[int]:
    """Those of `ids` whose payment has reached a final status (by primary key)."""
    return list(Payment.objects.filter(AnyOfIds(F("pk"), ids), status__in=Payment.FINAL_STATUSES)
                .values_list("pk", flat=True)) if ids else []


def payments_open_past_expiry(*, expired_before):
    """Payments still PENDING or PROCESSING whose expiry passed before `expired_before`, the
    oldest expiry first (the expiry sweep's partial index)."""
    return (Payment.objects.filter(status__in=[Payment.Status.PENDING, Payment.Status.PROCESSING],
                                   expires_at__lt=expired_before)
            .select_related("merchant").order_by("expires_at"))


def payments_settled(*, merchant: Merchant, start, end):
    """The merchant's payments that became SUCCESS in [start, end), in time order."""
    return (Payment.objects.filter(merchant=merchant, status=Payment.Status.SUCCESS,
                                   completed_at__gte=start, completed_at__lt=end)
            .order_by("completed_at", "id"))


def _reversals():
    return Reversal.objects.select_related("payment", "payment__merchant")


def reversals_failed():
    """Late approvals the acquirer refused to reverse (a person gives the money back), oldest first."""
    return _reversals().filter(status=Reversal.Status.FAILED).order_by("created_at", "pk")


def reversals_pending():
    """Late approvals on their way back to the acquirer, oldest first."""
    return _reversals().filter(status=Reversal.Status.PENDING).order_by("created_at", "pk")


def reversals_done_since(*, since):
    """Late approvals given back (reversed or settled by hand) since `since`, newest first."""
    return (_reversals().filter(status__in=Reversal.FINAL_STATUSES, completed_at__gte=since)
            .order_by("-completed_at", "-pk"))


# The payments sweep's safety nets (payments.tasks.payments_expire_sweep) look, every second,
# for the few open payments a lost message or a killed process left behind.
SWEEP_CANDIDATES = 200


def sweep_candidates(payments) -> list[int]:
    """The ids of `payments`, a narrow set of open payments with a partial index of its own,
    oldest first, at most SWEEP_CANDIDATES: the rest wait for the next sweeps, as the expiry
    itself goes oldest first. A safety net then asks its question about the events of these
    ids alone.

    PostgreSQL guesses the size of such a set from each column alone: open, UPI, a payer
    named makes a thousand of the fill's 60,000 payments, where there are none (an open UPI
    payment has no payer yet). Asked in one statement with the events question, it took the
    events' side first and read the whole events table every second; asked alone for all of
    them, it read every open payment through payment_open_expiry. Asked for the first
    SWEEP_CANDIDATES in id order, fewer than it guesses there are, the partial index read in
    order is the cheapest plan even by its guess, and reads only the set."""
    return list(payments.order_by("pk").values_list("pk", flat=True)[:SWEEP_CANDIDATES])


def upi_claimed_open_ids() -> list[int]:
    """sweep_candidates of the open UPI payments a payer has claimed (payment_upi_claimed): the
    set the UPI safety nets look in, asked the same way by each so that its plan stays the
    index's (narrowed by a payer's address too, PostgreSQL guessed one row and read every open
    payment instead)."""
    return sweep_candidates(Payment.objects.filter(status=Payment.Status.PROCESSING, payment_mode=Payment.Mode.UPI)
                            .exclude(payer_vpa=""))
