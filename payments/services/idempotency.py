"""X-Idempotency-Key on S2S payment creation, hosted session creation and refund creation
(docs/s2s.md, Idempotency).

- The same key with the same body answers with the response the first request got, byte for
  byte in its JSON, and creates nothing. "The same body" is every field of the JSON body but
  `timestamp` and `checksum` (a retry must be signed afresh, so those two change).
- The same key with another body is IDEMPOTENCY_MISMATCH.
- Only a request that created something is remembered. A request refused before or by the
  acquirer (validation, DUPLICATE_TRANSACTION, PAYMENT_FAILED, SERVICE_UNAVAILABLE,
  PROCESSING_ERROR) gives its key back, so a retry with that key is decided afresh.
- No transaction is open and no row is locked while the acquirer is called (STYLE.md). A
  request takes the key by committing its record "in flight": no response yet, and
  `expires_at` a short lease (IDEMPOTENCY_LEASE_SECONDS) instead of the 24 hours (committed
  without waiting for the disk: payments.writes.idempotency_key_take; the same statement may
  ask whether the merchantTxnId is taken, which refuses the request up front). It then runs
  the creation (`create`), which calls the acquirer with nothing held, and finally creates
  the payment and stores the response with an UPDATE that matches only while the lease is
  still its own, writing nothing when it is not, so both commit together: in one transaction
  (Lease.transaction and Lease.store: hosted sessions, refunds) or in one statement
  (Lease.response given to payments.writes.payment_insert_with_events: S2S payments).
- Concurrent requests with one key: one takes the key; the others find it in flight and wait
  (polling with short sleeps, at most IDEMPOTENCY_WAIT_SECONDS) until the response is stored,
  then answer with it. None fails, and only one payment is created. A request whose lease ran
  out (it died, or the acquirer took that long) loses the key to the next request with it;
  should it come back after all, it writes nothing and answers with the response stored by the
  request that took over, or SERVICE_UNAVAILABLE to retry.
- Records are kept IDEMPOTENCY_TTL (24 hours) and then deleted by the beat
  (`idempotency_records_delete_expired`); a record found past its time counts as absent.
"""
from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Callable, Iterator

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from gateway.core.errors import (
    DuplicateTransaction,
    GatewayError,
    IdempotencyMismatch,
    ServiceUnavailable,
    ValidationError,
)
from gateway.core.transactions import ensure_no_transaction
from gateway.platform.models import Merchant
from payments import writes
from payments.models import IdempotencyRecord, Payment
from payments.writes import KeyResponse

logger = logging.getLogger("payments.idempotency")

IDEMPOTENCY_TTL = timedelta(hours=24)
# How long a request holds a key while the acquirer answers. Longer than any acquirer call
# (their timeouts are well below it); after it, the request is taken for dead.
IDEMPOTENCY_LEASE = timedelta(seconds=getattr(settings, "IDEMPOTENCY_LEASE_SECONDS", 25))
# How long a request with a key in flight waits for the first one's response. Longer than the
# lease, so a waiter either gets the response or takes over from a request that died; well
# below the web worker's timeout (check_wait_below_worker_timeout).
IDEMPOTENCY_WAIT_SECONDS = settings.IDEMPOTENCY_WAIT_SECONDS
HEADER = "X-Idempotency-Key"
KEY_MAX = 255
# Visible ASCII, no spaces: UUIDs, ULIDs and order numbers all fit.
_KEY_PATTERN = re.compile(r"^[\x21-\x7e]{1,%d}$" % KEY_MAX)
# Fields that change on every retry of the same request: the signature and what it covers of time.
UNCOMPARED_FIELDS = frozenset({"timestamp", "checksum"})


@dataclass(frozen=True)
class Outcome:
    status: int
    body: dict
    replayed: bool


class LeaseLost(Exception):
    """The key's record was no longer this request's lease when the response was to be stored:
    nothing of the request was written (a transaction raising it is rolled back)."""


@dataclass
class Lease:
    """This request holds the key: the record `pk` while its `expires_at` is still `until` (a
    request that takes the key over writes another time). `refused`: whether the merchantTxnId
    was found taken as the key was taken, None when not asked then.

    idempotency_run's `create` gets it and stores its response with what it creates, in one
    of two ways: `response(status, body)` for a creation that is one statement storing it too
    (payments.writes.payment_insert_with_events), or `store(...)` inside `transaction()`. Both
    mark the start of the writing: a GatewayError raised before it (the acquirer's refusal)
    gives the key back as it is, one raised after it first looks whether a request that took
    the key over has stored the answer (idempotency_run)."""
    pk: int
    until: datetime
    refused: bool | None = None
    writing: bool = field(default=False, init=False)

    def response(self, status: int, body: dict) -> KeyResponse:
        """The response to store, in the key's record while this lease holds, kept
        IDEMPOTENCY_TTL from now. The write that stores it writes nothing when the lease is
        lost: raise LeaseLost then."""
        self.writing = True
        return KeyResponse(self.pk, self.until, status, body, keep_until=timezone.now() + IDEMPOTENCY_TTL)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The transaction in which the creation is written and `store` stores its response."""
        self.writing = True
        with transaction.atomic():
            yield

    def store(self, status: int, body: dict, *, payment: Payment | None) -> None:
        """Store the response (and the created `payment`, or None) in the key's record, inside
        `transaction()`. Raises LeaseLost, undoing the transaction, when the key is no longer
        this request's. The UPDATE locks the record, so it is decided against a request taking
        the key over (which locks it too)."""
        if not writes.idempotency_response_store(self.response(status, body), payment=payment):
            raise LeaseLost()


_BUSY = object()  # another request holds the key: wait and look again


def check_wait_below_worker_timeout(app_configs=None, **kwargs):
    """System check (payments.E001): a request that waits out IDEMPOTENCY_WAIT_SECONDS may then
    take the key over from a request that died and call the acquirer, which may take
    CALL_TIME_LIMIT. All of it must end before gunicorn's worker timeout
    (WEB_WORKER_TIMEOUT_SECONDS, gunicorn.conf.py), or the waiting request is killed instead of
    answered. gunicorn's default timeout, 30 s, equalled the wait."""
    from django.core.checks import Error

    from payments.acquirer.base import CALL_TIME_LIMIT

    wait, timeout = settings.IDEMPOTENCY_WAIT_SECONDS, settings.WEB_WORKER_TIMEOUT_SECONDS
    room = CALL_TIME_LIMIT.total_seconds()
    lease = IDEMPOTENCY_LEASE.total_seconds()
    if wait <= lease or wait + room > timeout:
        return [Error(
            f"IDEMPOTENCY_WAIT_SECONDS ({wait:g} s) must be longer than the key's lease ({lease:g} s) and, with "
            f"the {room:g} s an acquirer call may take after it, within the web worker timeout "
            f"WEB_WORKER_TIMEOUT_SECONDS ({timeout:g} s): otherwise gunicorn kills a request waiting for an "
            "X-Idempotency-Key instead of answering it.",
            hint=f"Keep WEB_WORKER_TIMEOUT_SECONDS at least IDEMPOTENCY_WAIT_SECONDS + {room:g} "
                 "(the defaults: 30 and 120).",
            id="payments.E001")]
    return []


def idempotency_key_clean(value) -> str | None:
    """The X-Idempotency-Key header value, or None when absent. ValidationError naming the
    header when it is empty, too long or not visible ASCII."""
    if value is None:
        return None
    if not _KEY_PATTERN.match(value):
        raise ValidationError(f"must be 1 to {KEY_MAX} visible ASCII characters without spaces", field=HEADER)
    return value


def request_fingerprint(body: dict) -> str:
    """SHA-256 of the body's compared fields as canonical JSON (sorted keys, no spaces), so key
    order and whitespace do not matter but every value, and its JSON type, does."""
    compared = {k: v for k, v in body.items() if k not in UNCOMPARED_FIELDS}
    # ASCII escapes: any string JSON can carry, a lone surrogate included, hashes without error.
    canonical = json.dumps(compared, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def idempotency_run(*, merchant: Merchant, key: str, fingerprint: str,
                    create: Callable[[Lease], tuple[int, dict]], merchant_txn_id: str | None = None) -> Outcome:
    """Run a creation at most once per (merchant, key) and body, answering repeats with the
    stored response. With `merchant_txn_id`, a request that takes the key while the merchant
    has a payment with that merchantTxnId is refused with DuplicateTransaction (and gives the
    key back) before anything else runs; the question rides on the statement that takes the key.

    `create(lease)` then runs with no transaction open and no lock held (the acquirer call
    belongs at its start), writes what it creates together with the response it stores with
    `lease` (Lease says how), and returns (HTTP status, response body). A GatewayError from it
    gives the key back and is raised here.

    Raises IdempotencyMismatch when the key was used with another body, ServiceUnavailable
    when another request with the key is still running after IDEMPOTENCY_WAIT_SECONDS (or took
    the key over from this one). Must be called outside any transaction (RuntimeError
    otherwise): the key is taken, and given back, in commits of its own that every other
    request with it must see at once."""
    ensure_no_transaction()
    lease = _acquire(merchant, key, fingerprint, merchant_txn_id)
    if isinstance(lease, Outcome):
        return lease
    try:
        if merchant_txn_id is not None and (
                lease.refused if lease.refused is not None
                else writes.payment_txn_id_taken(merchant=merchant, merchant_txn_id=merchant_txn_id)):
            raise DuplicateTransaction()
        return _finish(lease, fingerprint, create)
    except BaseException:
        # Nothing was written (a refusal, or a failure that rolled the creation back): give the
        # key back, so a retry is decided afresh. A no-op when the key is no longer ours.
        _release(lease)
        raise


def _acquire(merchant: Merchant, key: str, fingerprint: str, merchant_txn_id: str | None) -> Lease | Outcome:
    """Take the key, or answer with its stored response; while another request holds it,
    wait (short sleeps, growing to 0.2 s) for its response or for its lease to run out."""
    deadline = time.monotonic() + IDEMPOTENCY_WAIT_SECONDS
    pause = 0.01
    first = True
    while True:
        claim = _claim(merchant, key, fingerprint, merchant_txn_id, insert_first=first)
        if claim is not _BUSY:
            return claim
        if time.monotonic() >= deadline:
            raise ServiceUnavailable("another request with this X-Idempotency-Key is still being processed; "
                                     "retry later.")
        first = False
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def _claim(merchant: Merchant, key: str, fingerprint: str, merchant_txn_id: str | None, *,
           insert_first: bool = True):
    """One look at the key: a Lease when this request now holds it, the stored Outcome, or
    _BUSY. Raises IdempotencyMismatch. Waiting requests look with plain reads: they take no
    lock and open no transaction unless the key looks free."""
    if insert_first:
        lease = _insert(merchant, key, fingerprint, merchant_txn_id)
        if lease is not None:
            return lease
    existing = IdempotencyRecord.objects.filter(merchant=merchant, key=key).first()
    if existing is None:  # given back a moment ago (or never there): take it
        return _insert(merchant, key, fingerprint, merchant_txn_id) or _BUSY
    verdict = _judge(existing, fingerprint)
    if verdict is not _FREE:
        return verdict
    with transaction.atomic():
        # Serialises taking over a free key: two requests that both read it as lapsed cannot
        # both take it; the second finds the first's lease here.
        existing = IdempotencyRecord.objects.select_for_update().filter(pk=existing.pk).first()
        if existing is None:
            return _BUSY
        verdict = _judge(existing, fingerprint)
        if verdict is not _FREE:
            return verdict
        existing.fingerprint, existing.response_status, existing.response_body, existing.payment = (
            fingerprint, None, None, None)
        existing.expires_at = timezone.now() + IDEMPOTENCY_LEASE
        existing.save()
        return Lease(existing.pk, existing.expires_at)


def _insert(merchant: Merchant, key: str, fingerprint: str, merchant_txn_id: str | None) -> Lease | None:
    """Take a key nobody has: its record, in flight, committed at once, so that from now on
    every request with the key finds it (and whether `merchant_txn_id` is taken answered by
    the same statement). None when the key already has a record."""
    lease_until = timezone.now() + IDEMPOTENCY_LEASE
    record = IdempotencyRecord(merchant=merchant, key=key, fingerprint=fingerprint, expires_at=lease_until)
    # Committed without waiting for the disk: a lease lost in a database crash is a lease that
    # ran out early, and the acquirer is called again by the retry either way. The payment and
    # the stored response commit durably, which flushes this row with them.
    inserted, taken = writes.idempotency_key_take(record, merchant_txn_id=merchant_txn_id)
    if not inserted:  # unique (merchant, key)
        return None
    return Lease(record.pk, lease_until, taken)


_FREE = object()


def _judge(existing: IdempotencyRecord, fingerprint: str):
    """What a record says to a request with `fingerprint`: _FREE (past its retention, or in
    flight past its lease: that request died), the stored Outcome, or _BUSY (in flight).
    Raises IdempotencyMismatch when a live record has another body."""
    now = timezone.now()
    if existing.expires_at <= now or _left_by_an_old_request(existing, now):
        return _FREE
    if existing.fingerprint != fingerprint:
        raise IdempotencyMismatch()
    if existing.response_body is not None:
        return Outcome(existing.response_status, existing.response_body, replayed=True)
    return _BUSY


def _left_by_an_old_request(existing: IdempotencyRecord, now: datetime) -> bool:
    # A record without a response whose time is far beyond any lease was written before keys
    # were leased (when the record got its 24 hours at once) by a request that then died.
    return existing.response_body is None and existing.expires_at > now + 2 * IDEMPOTENCY_LEASE


def _release(lease: Lease) -> None:
    """Give the key back if this request still holds it and stored no response."""
    try:
        IdempotencyRecord.objects.filter(pk=lease.pk, expires_at=lease.until, response_body__isnull=True).delete()
    except Exception:  # noqa: BLE001 - never hide the original error; the lease runs out anyway
        logger.warning("idempotency record %s not given back; it frees itself when its lease ends", lease.pk,
                       exc_info=True)


def _finish(lease: Lease, fingerprint: str, create: Callable[[Lease], tuple[int, dict]]) -> Outcome:
    """The creation and the stored response, written together if this request still holds the
    key when the response is stored; else nothing is written.

    The response is stored by an UPDATE that matches only while the lease is ours (the
    record's `expires_at` is still this lease's and it holds no response). It locks the record,
    so it is decided against any request taking the key over (which locks it too): if that one
    came first, nothing matches and nothing of this request is written (a transaction's writes
    are rolled back; a single statement inserts nothing)."""
    try:
        status, body = create(lease)
    except (LeaseLost, GatewayError) as exc:
        if not lease.writing:
            raise  # refused before writing (by the acquirer): idempotency_run gives the key back
        # Nothing of this request was written. If the lease ran out while the acquirer
        # answered, the request that took the key over may have finished with the same body
        # (its own payment may even be why the creation found merchantTxnId taken): answer
        # with its response.
        held = IdempotencyRecord.objects.filter(pk=lease.pk).first()
        if held is not None and held.response_body is not None and held.fingerprint == fingerprint:
            return Outcome(held.response_status, held.response_body, replayed=True)
        if isinstance(exc, LeaseLost):
            raise ServiceUnavailable("this request took too long and another with the same X-Idempotency-Key "
                                     "took over; retry later.") from None
        raise  # a refusal: idempotency_run gives the key back, so a retry is decided afresh
    return Outcome(status, body, replayed=False)


def idempotency_records_delete_expired(*, now=None, batch_size: int = 1000, max_batches: int = 1000) -> int:
    """Delete the records past their retention; returns how many. In batches, so one run
    never holds many rows at once; a later run carries on where `max_batches` stopped."""
    now = now or timezone.now()
    deleted = 0
    for _ in range(max_batches):
        ids = list(IdempotencyRecord.objects.filter(expires_at__lte=now)
                   .order_by("pk").values_list("pk", flat=True)[:batch_size])
        if not ids:
            break
        count, _ = IdempotencyRecord.objects.filter(pk__in=ids, expires_at__lte=now).delete()
        deleted += count
    return deleted
