"""Payments in every status, made through the payments core's own transitions, and signed
refund requests as the official SDK builds them."""
from __future__ import annotations

import itertools
import time
from datetime import timedelta

from django.utils import timezone

from gateway.core.signing import compute_checksum
from payments.acquirer.sandbox import new_rrn
from payments.models import Payment
from payments.services.transitions import (
    payment_expire,
    payment_mark_failed,
    payment_mark_processing,
    payment_mark_succeeded,
)

_counter = itertools.count(1)


def _merchant_of(merchant):
    return getattr(merchant, "merchant", merchant)  # a TestMerchant or a Merchant


def make_payment(merchant, *, amount: int = 10_000, status: str = Payment.Status.SUCCESS,
                 payment_mode: str = Payment.Mode.UPI, **fields) -> Payment:
    """A hosted payment of `amount` paise moved to `status` the way real ones are: PENDING,
    then payment_mark_processing, then succeeded / failed / expired. `fields` (payer_vpa,
    card_last4, bank_code ...) are recorded when the method is chosen."""
    payment = Payment.objects.create(
        merchant=_merchant_of(merchant), flow=Payment.Flow.HOSTED, status=Payment.Status.PENDING,
        merchant_txn_id=f"ORD{next(_counter):05d}T{time.time_ns() % 10**9}", amount=amount,
        return_url="https://merchant.example/return", expires_at=timezone.now() + timedelta(minutes=30),
    )
    if status == Payment.Status.PENDING:
        return payment
    if status == Payment.Status.EXPIRED:
        Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        return payment_expire(payment_id=payment.pk)
    if payment_mode == Payment.Mode.UPI:
        fields.setdefault("payer_vpa", "success@sandbox")
    payment_mark_processing(payment_id=payment.pk, payment_mode=payment_mode, **fields)
    if status == Payment.Status.PROCESSING:
        return Payment.objects.get(pk=payment.pk)
    if status == Payment.Status.FAILED:
        return payment_mark_failed(payment_id=payment.pk, reason="declined (test)")
    return payment_mark_succeeded(payment_id=payment.pk, bank_rrn=new_rrn())


def make_success_payment(merchant, *, amount: int = 10_000, **kwargs) -> Payment:
    return make_payment(merchant, amount=amount, status=Payment.Status.SUCCESS, **kwargs)


def refund_body(test_merchant, payment: Payment, *, sign: bool = False, **fields) -> dict:
    """A POST /api/v2/refunds body in the interface's names; `sign=True` adds the SDK's
    refundId-covering timestamp and checksum (a refundId is made up when none is given)."""
    body = {"merchantId": test_merchant.code, "sabpaisaTxnId": payment.sabpaisa_txn_id, **fields}
    if sign:
        body.setdefault("refundId", f"REF{time.time_ns()}")
        body["timestamp"] = int(time.time())
        body["checksum"] = compute_checksum(test_merchant.secret_key, body["merchantId"], body["sabpaisaTxnId"],
                                            body["refundId"], body["timestamp"])
    return {key: value for key, value in body.items() if value is not None}
