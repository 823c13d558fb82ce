"""X-Idempotency-Key on S2S payment creation (docs/s2s.md, Idempotency).

- The same key with the same body answers with the response the first request got, byte for
  byte in its JSON, and creates nothing. "The same body" is every field of the JSON body but
  `timestamp` and `checksum` (a retry must be signed afresh, so those two change).
- The same key with another body is IDEMPOTENCY_MISMATCH.
- Only a request that created a payment is remembered. A request refused before or by the
  acquirer (validation, DUPLICATE_TRANSACTION, PAYMENT_FAILED, SERVICE_UNAVAILABLE,
  PROCESSING_ERROR) gives its key back, so a retry with that key is decided afresh.
- Concurrent requests with one key: the row (merchant, key) is inserted and committed first;
  each request then locks it. The first runs the creation while holding the lock and stores
  its response in the same transaction as the payment; the others wait on the lock and then
  answer with that stored response. None fails, and only one payment is created.
- Records are kept IDEMPOTENCY_TTL (24 hours) and then deleted by the beat
  (`idempotency_records_delete_expired`); a record found past its time counts as absent.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Callable

from django.db import transaction
from django.utils import timezone

from gateway.errors import GatewayError, IdempotencyMismatch, ValidationError
from gateway.models import Merchant
from payments.models import IdempotencyRecord, Payment

IDEMPOTENCY_TTL = timedelta(hours=24)
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


_GONE = object()


def idempotency_run(*, merchant: Merchant, key: str, fingerprint: str,
                    execute: Callable[[], tuple[int, dict, Payment]]) -> Outcome:
    """Run `execute` at most once per (merchant, key) and body, answering repeats with the
    stored response. `execute` returns (HTTP status, response body, payment) or raises a
    GatewayError, which gives the key back and is raised here. Raises IdempotencyMismatch when
    the key was used with another body. Must be called outside any transaction."""
    for _ in range(5):
        _insert_if_absent(merchant, key, fingerprint)
        outcome = _run_locked(merchant, key, fingerprint, execute)
        if outcome is not _GONE:
            return outcome
    # Five times in a row the row vanished between insert and lock: other requests with this
    # key keep failing and giving it back. Tell the caller to retry rather than loop forever.
    from gateway.errors import ServiceUnavailable

    raise ServiceUnavailable("another request with this X-Idempotency-Key is being retried; retry later.")


def _insert_if_absent(merchant: Merchant, key: str, fingerprint: str) -> None:
    # Its own committed statement (INSERT ... ON CONFLICT DO NOTHING), so that every request with
    # this key, from now on, has a row to queue on.
    IdempotencyRecord.objects.bulk_create(
        [IdempotencyRecord(merchant=merchant, key=key, fingerprint=fingerprint,
                           expires_at=timezone.now() + IDEMPOTENCY_TTL)],
        ignore_conflicts=True,
    )


def _run_locked(merchant, key, fingerprint, execute):
    error: GatewayError | None = None
    with transaction.atomic():
        # Serialises requests with one key: a second request waits here until the first has
        # committed its payment and stored response (or given the key back), instead of both
        # passing the "no response yet" check and creating two payments.
        record = (IdempotencyRecord.objects.select_for_update()
                  .filter(merchant=merchant, key=key).first())
        if record is None:
            return _GONE  # a failed request gave the key back between our insert and our lock
        if record.expires_at <= timezone.now():
            # Past its retention and not yet swept: the key is free again.
            record.fingerprint, record.response_status, record.response_body, record.payment = (
                fingerprint, None, None, None)
            record.expires_at = timezone.now() + IDEMPOTENCY_TTL
        elif record.fingerprint != fingerprint:
            raise IdempotencyMismatch()
        elif record.response_body is not None:
            return Outcome(record.response_status, record.response_body, replayed=True)
        try:
            status, body, payment = execute()
        except GatewayError as exc:
            # Nothing was created: give the key back, so a retry is decided afresh.
            record.delete()
            error = exc
        else:
            record.response_status, record.response_body, record.payment = status, body, payment
            record.save()
    if error is not None:
        raise error
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
