"""An S2S creation claims its merchantTxnId before it calls the acquirer (issue 28).

Without the claim, two concurrent creations with one merchantTxnId (with one X-Idempotency-Key
whose lease ran out mid-call, or with two keys, or with none) both passed the "is it taken?"
question, both had the acquirer open an order, and then one insert lost to the unique
constraint: an order at the processor with no payment of ours. Now:

- `txn_claim_take` commits a MerchantTxnClaim (unique per merchant and merchantTxnId) before
  the call. A second request finds it: while the holder may still be calling the acquirer
  (`lease_until`) it is refused (ClaimBusy: a duplicate, or, under the holder's own
  idempotency key, "come back"), and only one request ever calls the acquirer.
- The claim carries the ids the payment will have. `txn_claim_held` ends it by what happened:
  the payment written: kept (its lease lapses; a later request finds the payment); the
  acquirer refused (PAYMENT_FAILED, PROCESSING_ERROR) or the merchantTxnId was taken: deleted,
  so a retry starts afresh; anything else (no answer from the acquirer, a lease lost, a crash)
  leaves the outcome at the acquirer unknown, so the lease is ended and the ids kept: the retry
  takes the claim over and calls the acquirer with the same sabpaisaTxnId, whose idempotency
  keys make the acquirer answer its first order instead of opening another.
- A lapsed claim is taken over under a row lock, and only while no payment has the
  merchantTxnId (DuplicateTransaction otherwise). A new claim's own statement asks the same
  (payments.writes.txn_claim_insert), so a duplicate of a payment made long ago costs one
  round trip, and a creation needs no question of its own before it.

Called outside any transaction (it commits the claim at once, which every other request must
see), never holding a lock across the acquirer call.
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Iterator

from django.db import transaction
from django.utils import timezone

from gateway.core.errors import DuplicateTransaction, PaymentFailed, ProcessingError
from gateway.core.transactions import ensure_no_transaction
from gateway.platform.models import Merchant
from payments.acquirer.base import CALL_TIME_LIMIT
from payments.models import MerchantTxnClaim, Payment
from payments.writes import txn_claim_insert

logger = logging.getLogger(__name__)

# While the holder may still be calling the acquirer: its longest call, and room to record it.
CLAIM_LEASE = CALL_TIME_LIMIT + timedelta(seconds=15)


class ClaimBusy(Exception):
    """A request holds the merchantTxnId and may still be calling the acquirer. `same_key`:
    it holds it under the X-Idempotency-Key of the request asking (a retry whose key's lease it
    took over), which should come back; otherwise the asking request is a duplicate."""

    def __init__(self, *, same_key: bool):
        super().__init__("the merchantTxnId is being created by another request")
        self.same_key = same_key


@dataclass(frozen=True)
class TxnClaim:
    pk: int
    until: datetime
    sabpaisa_txn_id: str
    payment_id: str


def txn_claim_take(*, merchant: Merchant, merchant_txn_id: str, key: str | None = None) -> TxnClaim:
    """Hold `merchant_txn_id` for one S2S creation; the returned ids are the payment's. Raises
    ClaimBusy while another request holds it, DuplicateTransaction when a payment has it."""
    ensure_no_transaction()
    now = timezone.now()
    row = MerchantTxnClaim(merchant=merchant, merchant_txn_id=merchant_txn_id, key=key or "",
                           lease_until=now + CLAIM_LEASE)
    inserted, paid = txn_claim_insert(row)
    if inserted:
        if paid:  # a hosted payment's (which claims nothing), or one whose claim was deleted since
            _mine(_held(row)).delete()
            raise DuplicateTransaction()
        return _held(row)
    # Claimed before: by a request still in flight, one that ended, or a payment's.
    with transaction.atomic():
        # Serialises taking over a lapsed claim: of two requests that both find it lapsed, the
        # second waits here and then finds the first one's lease.
        row = (MerchantTxnClaim.objects.select_for_update()
               .filter(merchant=merchant, merchant_txn_id=merchant_txn_id).first())
        if row is None:
            raise ClaimBusy(same_key=False)  # given back this instant: not ours now
        if row.lease_until > now:
            raise ClaimBusy(same_key=bool(key) and row.key == key)
        if Payment.objects.filter(merchant=merchant, merchant_txn_id=merchant_txn_id).exists():
            raise DuplicateTransaction()
        row.lease_until, row.key = now + CLAIM_LEASE, key or ""
        row.save(update_fields=["lease_until", "key"])
    return _held(row)


def _held(row: MerchantTxnClaim) -> TxnClaim:
    return TxnClaim(row.pk, row.lease_until, row.sabpaisa_txn_id, row.payment_id)


@contextmanager
def txn_claim_held(claim: TxnClaim) -> Iterator[None]:
    """Run the acquirer call and the payment's insert under `claim`, ending it by the outcome
    (module docstring). Re-raises whatever the block raised."""
    try:
        yield
    except (PaymentFailed, ProcessingError, DuplicateTransaction):
        # The acquirer answered no, or another flow took the merchantTxnId: nothing to keep.
        _mine(claim).delete()
        raise
    except BaseException:
        # The acquirer's outcome is unknown: keep the ids for the retry, end the lease now.
        try:
            _mine(claim).update(lease_until=timezone.now())
        except Exception:  # noqa: BLE001 - never hide the original error; the lease runs out anyway
            logger.warning("merchantTxnId claim %s not ended; it lapses with its lease", claim.pk, exc_info=True)
        raise


def _mine(claim: TxnClaim):
    # Only while the claim is still this request's lease (not taken over since).
    return MerchantTxnClaim.objects.filter(pk=claim.pk, lease_until=claim.until)


def txn_claims_delete_expired(*, now=None, keep: timedelta) -> int:
    """Delete the claims whose lease ended more than `keep` ago; returns how many."""
    now = now or timezone.now()
    deleted, _ = MerchantTxnClaim.objects.filter(lease_until__lte=now - keep).delete()
    return deleted
