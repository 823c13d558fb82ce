"""Razorpay's notices (its webhooks): is this delivery really Razorpay's and fresh, and what does it
say, as the neutral values of payments.acquirer.base (PaymentNotice, RefundNotice).

Verification, as Razorpay specifies (Webhooks > Validate and test): `X-Razorpay-Signature` is the
hex HMAC-SHA256 of the raw body, keyed with the webhook secret set in Razorpay's dashboard
(RAZORPAY_WEBHOOK_SECRET), over the body's bytes exactly as received (never re-serialised JSON),
compared in constant time (hmac.compare_digest).

What Razorpay leaves to the receiver, and how we decide (docs/going-live.md, "Razorpay"):
- Razorpay signs no timestamp. The event's own `created_at` (Unix seconds, inside the signed
  body) is its time of sending: at most MAX_AGE_SECONDS old to be `fresh`, at most
  MAX_AHEAD_SECONDS in the future (refused). An older genuine delivery is Razorpay's own retry
  (it retries with the first body for up to 24 hours) or a replay: taken, marked not fresh, and
  believed only as the status query confirms it (the inbound door's rule for every acquirer).
- A notice names our payment by the order's receipt or the `sabpaisa_txn_id` note the adapter
  writes on every order, payment and refund it creates (Razorpay's own order id is not ours).

Parsing: payload.payment.entity is the payment entity the status query lists, and
payload.refund.entity the refund entity the refund calls answer; both are read by the client's
readers and answered by answers.py, as the adapter's status query and refund are.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import time
from datetime import datetime, timezone
from typing import Any, Mapping

from payments.acquirer.base import (
    NoticeDelivery,
    NoticeMalformed,
    NoticeNotFresh,
    NoticeRejected,
    PaymentNotice,
    RefundNotice,
)

from . import answers
from .client import RazorpayBadResponse, payment_entity, refund_entity

MAX_AGE_SECONDS = 300
MAX_AHEAD_SECONDS = 30
SIGNATURE_HEADER = "x-razorpay-signature"
TXN_NOTE = "sabpaisa_txn_id"  # the note naming our payment on Razorpay's order, payment and refund
REFUND_NOTE = "gateway_refund"  # the note naming our refund (its receipt, as refund_ref gives it)


def webhook_signature(*, secret: str, raw_body: bytes) -> str:
    return hmac.new(secret.encode(), raw_body, hashlib.sha256).hexdigest()


def notice_verify(*, secret: str, headers: Mapping[str, str], raw_body: bytes,
                  now: float | None = None) -> NoticeDelivery:
    """The delivery when X-Razorpay-Signature holds; NoticeRejected otherwise (module docstring)."""
    if not secret:
        raise NoticeRejected("no Razorpay webhook secret is configured")
    if not isinstance(raw_body, bytes):
        raise TypeError("raw_body must be the request's bytes as received")
    signature = {key.lower(): value for key, value in headers.items()}.get(SIGNATURE_HEADER, "")
    if not signature:
        raise NoticeRejected(f"missing {SIGNATURE_HEADER}")
    expected = webhook_signature(secret=secret, raw_body=raw_body)
    if not hmac.compare_digest(expected.encode(), signature.strip().lower().encode("utf-8", "replace")):
        raise NoticeRejected("signature does not match")
    try:
        payload = json.loads(raw_body)
    except ValueError:
        raise NoticeMalformed("body is not JSON") from None
    if not isinstance(payload, dict) or payload.get("entity") != "event":
        raise NoticeMalformed("body is not a Razorpay event")
    created = payload.get("created_at")
    if isinstance(created, bool) or not isinstance(created, int):
        raise NoticeMalformed("the event has no created_at")
    now = time.time() if now is None else now
    if created > now + MAX_AHEAD_SECONDS:
        raise NoticeNotFresh(f"created_at is more than {MAX_AHEAD_SECONDS} s ahead")
    return NoticeDelivery(payload=payload, sent_at=datetime.fromtimestamp(created, tz=timezone.utc),
                          fresh=created >= now - MAX_AGE_SECONDS, event_type=str(payload.get("event") or "")[:60])


def _entity(payload: dict, name: str) -> Any:
    holder = payload.get("payload") if isinstance(payload.get("payload"), dict) else {}
    wrapped = holder.get(name) if isinstance(holder.get(name), dict) else {}
    return wrapped.get("entity") if isinstance(wrapped.get("entity"), dict) else None


def _final(answer_of, entity):
    try:
        return answer_of(entity)
    except answers.NotFinal:
        return None


def notice_parse(payload: dict) -> PaymentNotice | RefundNotice | None:
    """A verified payment, order or refund event as a PaymentNotice or RefundNotice; None for any
    other event, or one that names no payment of ours."""
    event = str(payload.get("event") or "")
    try:
        if event.startswith("refund.") and _entity(payload, "refund") is not None:
            refund = refund_entity(_entity(payload, "refund"))
            order_ref = str(refund.notes.get(TXN_NOTE) or "")
            if not order_ref:
                return None
            answer = refund_answer_if_final(refund)
            return RefundNotice(order_ref=order_ref, refund_ref=refund.receipt or str(refund.notes.get(REFUND_NOTE) or ""),
                                amount=refund.amount, answer=answer)
        if (event.startswith("payment.") or event == "order.paid") and _entity(payload, "payment") is not None:
            found = payment_entity(_entity(payload, "payment"))
            order = _entity(payload, "order") or {}
            order_ref = str(found.notes.get(TXN_NOTE) or order.get("receipt") or "")
            if not order_ref:
                return None
            return PaymentNotice(order_ref=order_ref, amount=found.amount,
                                 answer=_final(answers.payment_answer, found), attempt_ref=found.id)
    except RazorpayBadResponse as exc:
        raise NoticeMalformed(f"not a Razorpay {event or 'event'}: {exc}") from None
    return None


def refund_answer_if_final(refund):
    return answers.refund_answer(refund) if refund.status in answers.REFUND_FINAL else None
