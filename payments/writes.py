"""payments' hand-written statements: the one module of payments that uses gateway.perf.sql.

The API's hottest paths write a payment with its events, claim its merchantTxnId, take an
idempotency key and store its response; their statements are written once by gateway.perf.sql
(one round trip where the ORM needs two to four, and no queryset to compile: gateway/perf/sql.py
says why). Services call the domain verbs below and never see the layer's types.

Two reads live here too, because they are statements of the same kind and the wall is "one
module per app imports gateway.perf.sql": whether a merchantTxnId is taken (also asked inside
the statement that takes an idempotency key) and the enquiry's payment (its refund totals are its own columns).
Their public faces are in payments.selectors, where every read of payments is found.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from django.db import connection

from gateway.core.metrics import payments_created
from gateway.perf import sql
from gateway.platform.models import Merchant
from payments.models import IdempotencyRecord, MerchantTxnClaim, Payment, PaymentEvent


@dataclass(frozen=True)
class KeyResponse:
    """The response to store in an idempotency key's record (`record_pk`), written only while
    the record is still the lease of the request that writes it: its `expires_at` still
    `lease_until` and no response in it yet. Once stored, the record is kept until
    `keep_until` and points at the created payment."""
    record_pk: int
    lease_until: datetime
    status: int
    body: dict
    keep_until: datetime


def _claim(response: KeyResponse) -> sql.Claim:
    return sql.Claim(IdempotencyRecord,
                     where={"pk": response.record_pk, "expires_at": response.lease_until, "response_body": None},
                     values={"response_status": response.status, "response_body": response.body,
                             "expires_at": response.keep_until},
                     link="payment")


def payment_insert_with_events(payment: Payment, events: list[PaymentEvent], *,
                               response: KeyResponse | None = None) -> bool:
    """Insert the new `payment` and its `events` as one statement, atomic by itself (so a caller
    with nothing else to write needs no BEGIN and COMMIT); their primary keys are set. With
    `response`, the same statement stores it in its idempotency record, and writes nothing
    (returning False) when the record is no longer that request's lease. Returns True when
    written. Raises IntegrityError as an INSERT would (payment_unique_merchant_txn)."""
    written = sql.insert_with_children(payment, events, link="payment",
                                       claim=None if response is None else _claim(response))
    if written:
        # Counted at once, not on commit: on the API's path this statement commits by itself, and
        # creation queues nothing after its commit (tests/payments/hosted/test_create.py).
        payments_created.labels(payment.flow.lower() if payment.flow else "unknown").inc()
    return written


def payment_events_insert(events: list[PaymentEvent]) -> None:
    """Insert `events` (of any payments) as one multi-row INSERT; their primary keys are set."""
    sql.insert_rows(PaymentEvent, events)


def idempotency_key_take(record: IdempotencyRecord, *, merchant_txn_id: str | None = None) -> tuple[bool, bool | None]:
    """Insert the in-flight `record` unless its (merchant, key) already has one, committed at
    once without waiting for the disk (a lease lost in a database crash is a lease that ran out
    early). Returns (inserted, taken): with `merchant_txn_id`, `taken` answers in the same
    statement whether the record's merchant already has a payment with it; None when nothing
    was inserted or nothing asked."""
    question = None if merchant_txn_id is None else _txn_id_question(record.merchant, merchant_txn_id)
    return sql.insert_unless_taken(IdempotencyRecord, record, question, flush_to_disk=False)


def txn_claim_insert(claim: MerchantTxnClaim) -> tuple[bool, bool]:
    """Insert `claim` unless its merchant's merchantTxnId is claimed already (or, astronomically
    rarely, its ids are): (inserted, paid). `inserted` with its primary key set; `paid`, when
    inserted, whether a payment of the merchant has the merchantTxnId already (a claim lapses
    and is deleted long before its payment is), asked in the same statement. One statement,
    committed by itself, where the ORM's create needs BEGIN, INSERT and COMMIT to survive the
    IntegrityError, and the question its own SELECT: every S2S creation makes it, so three
    round trips fewer per creation."""
    inserted, paid = sql.insert_unless_taken(MerchantTxnClaim, claim,
                                             _txn_id_question(claim.merchant, claim.merchant_txn_id))
    return inserted, bool(paid)


def idempotency_response_store(response: KeyResponse, *, payment: Payment | None) -> bool:
    """Store `response` (and `payment`, the created one or None) in its record if the record is
    still the writer's lease; False when it is not (nothing written). In the caller's
    transaction, so what it created commits with the response."""
    claim = _claim(response)
    return bool(sql.update_where(claim.model, claim.where, {**claim.values, claim.link: payment}))


def _txn_id_question(merchant: Merchant, merchant_txn_id: str) -> sql.Exists:
    return sql.Exists(Payment, {"merchant": merchant, "merchant_txn_id": merchant_txn_id})


def payment_txn_id_taken(*, merchant: Merchant, merchant_txn_id: str) -> bool:
    """Whether the merchant has a payment (either flow) with that merchantTxnId: one SELECT EXISTS."""
    return sql.exists(_txn_id_question(merchant, merchant_txn_id))


@lru_cache(maxsize=None)
def _payment_by_merchant_txn_id_statement() -> str:
    return (f"SELECT {sql.columns(Payment, 'p')} "
            f"FROM {connection.ops.quote_name(Payment._meta.db_table)} p "
            "WHERE p.merchant_id = %s AND p.merchant_txn_id = %s")


def payment_get_by_merchant_txn_id(*, merchant: Merchant, merchant_txn_id: str) -> Payment | None:
    """The merchant's payment with that merchantTxnId, its refund totals included (they are its
    columns), by one statement written once (the enquiry: payments.selectors.payment_get_for_enquiry);
    None when there is no such payment."""
    with connection.cursor() as cursor:
        cursor.execute(_payment_by_merchant_txn_id_statement(), [merchant.pk, merchant_txn_id])
        row = cursor.fetchone()
    if row is None:
        return None
    payment = sql.instance(Payment, row)
    payment.merchant = merchant
    return payment
