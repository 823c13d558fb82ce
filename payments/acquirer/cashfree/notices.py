"""Cashfree's notices (its webhooks): is this delivery really Cashfree's and fresh, and what
does it say, as the neutral values of payments.acquirer.base (PaymentNotice, RefundNotice).

Verification, as Cashfree specifies (Payment Gateway > Webhooks > Signature verification): the
signature in `x-webhook-signature` is Base64(HMAC-SHA256(key=secret, message=x-webhook-timestamp
+ raw body)), over the body's bytes exactly as received (never a re-serialised JSON), with the
PG client secret as the key (CASHFREE_WEBHOOK_SECRET where the account has a separate one).

What Cashfree leaves to the receiver, and how we decide (docs/going-live.md):
- `x-webhook-timestamp` is epoch milliseconds (Cashfree's example: 1617695238078). Only
  digits are accepted; a seconds value would read as 1970 and be refused as stale.
- Freshness window: at most MAX_AGE_SECONDS (300) old, at most MAX_AHEAD_SECONDS (30) in the
  future (clock skew). A delivery from the future is refused even with a good signature. An
  older one with a good signature is Cashfree's own retry (it retries a delivery we did not
  answer 2xx, with its first timestamp) or a captured one replayed: notice_verify takes it,
  marked not fresh (NoticeDelivery.fresh), and the inbound door believes nothing it says
  until Cashfree's status query confirms it (Acquirer.notice_confirm), so a retry is not lost
  and a replay changes nothing the status query does not say. Within the window, the inbound
  door (one AcquirerNotice per delivered body) makes a second delivery of the same body change
  nothing (this module has no storage).
- Comparison is constant time (hmac.compare_digest) over the bytes of the two signatures.

Parsing: a payment webhook's `data.payment` is the same payment entity the status query lists,
and a refund webhook's `data.refund` the same refund entity the refund calls answer; both are
read by the client's own readers and answered by answers.py, the functions the adapter's
status query and refund use. So a notice and a status query of one state carry one answer.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Mapping

from payments.acquirer.base import (
    AcquirerUnavailable,
    DisputeNotice,
    NoticeDelivery,
    NoticeMalformed,
    NoticeNotFresh,
    NoticeRejected,
    PaymentNotice,
    RefundNotice,
    SettlementNotice,
)

from . import answers
from .client import CashfreeClient, payment_entity, refund_entity, settlement_entity
from .settlements import settlement_found
from .disputes import dispute_found
from .errors import CashfreeError
from .money import rupees_to_paise

MAX_AGE_SECONDS = 300
MAX_AHEAD_SECONDS = 30
SIGNATURE_HEADER = "x-webhook-signature"
TIMESTAMP_HEADER = "x-webhook-timestamp"


# The protocol's names for what can be wrong with a delivery (payments.acquirer.base).
WebhookVerificationError = NoticeRejected
WebhookNotFresh = NoticeNotFresh
WebhookMalformed = NoticeMalformed


def webhook_signature(*, secret: str, timestamp: str, raw_body: bytes) -> str:
    """Base64 HMAC-SHA256 of timestamp + raw body: what Cashfree puts in x-webhook-signature."""
    digest = hmac.new(secret.encode(), timestamp.encode() + raw_body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def verify_webhook(*, secret: str, headers: Mapping[str, str], raw_body: bytes,
                   now: float | None = None, accept_stale: bool = False) -> dict[str, Any]:
    """The delivery's JSON (amounts as Decimal) when its signature and timestamp hold;
    WebhookVerificationError otherwise. `headers` are matched case-insensitively. With
    `accept_stale`, a genuine delivery older than MAX_AGE_SECONDS is returned too (its signature
    is checked first, as always); the caller must not trust what it says without asking."""
    if not secret:
        raise WebhookVerificationError("no Cashfree webhook secret is configured")
    lowered = {key.lower(): value for key, value in headers.items()}
    signature = lowered.get(SIGNATURE_HEADER, "")
    timestamp = lowered.get(TIMESTAMP_HEADER, "")
    if not signature:
        raise WebhookVerificationError(f"missing {SIGNATURE_HEADER}")
    if not timestamp:
        raise WebhookVerificationError(f"missing {TIMESTAMP_HEADER}")
    if not (timestamp.isascii() and timestamp.isdigit()) or len(timestamp) > 16:
        raise WebhookVerificationError(f"{TIMESTAMP_HEADER} is not epoch milliseconds")
    if not isinstance(raw_body, bytes):
        raise TypeError("raw_body must be the request's bytes as received")

    expected = webhook_signature(secret=secret, timestamp=timestamp, raw_body=raw_body)
    if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
        raise WebhookVerificationError("signature does not match")

    now = time.time() if now is None else now
    sent = int(timestamp) / 1000
    if sent < now - MAX_AGE_SECONDS and not accept_stale:
        raise WebhookNotFresh(f"timestamp is more than {MAX_AGE_SECONDS} s old")
    if sent > now + MAX_AHEAD_SECONDS:
        raise WebhookNotFresh(f"timestamp is more than {MAX_AHEAD_SECONDS} s ahead")

    try:
        payload = json.loads(raw_body, parse_float=Decimal)
    except ValueError:
        raise WebhookMalformed("body is not JSON") from None
    if not isinstance(payload, dict):
        raise WebhookMalformed("body is not a JSON object")
    return payload


def notice_verify(*, secret: str, headers: Mapping[str, str], raw_body: bytes,
                  now: float | None = None) -> NoticeDelivery:
    """verify_webhook's payload with Cashfree's time of sending and its event type; a genuine
    delivery older than MAX_AGE_SECONDS (a retry) is returned not `fresh` (the module's
    docstring), one from the future is refused."""
    now = time.time() if now is None else now
    payload = verify_webhook(secret=secret, headers=headers, raw_body=raw_body, now=now, accept_stale=True)
    timestamp = {key.lower(): value for key, value in headers.items()}[TIMESTAMP_HEADER]
    sent = int(timestamp) / 1000
    return NoticeDelivery(payload=payload, sent_at=datetime.fromtimestamp(sent, tz=timezone.utc),
                          fresh=sent >= now - MAX_AGE_SECONDS,
                          event_type=str(payload.get("type") or "")[:60])


# -- what a verified delivery says ---------------------------------------------------------------

def _amount(value: Any) -> int | None:
    try:
        return rupees_to_paise(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _final(answer_of, entity):
    try:
        return answer_of(entity)
    except answers.NotFinal:
        return None


def notice_parse(payload: dict) -> PaymentNotice | RefundNotice | DisputeNotice | SettlementNotice | None:
    """A verified payment, refund or dispute webhook as a PaymentNotice, RefundNotice or
    DisputeNotice; None for any other (Cashfree's other event types), or one without what it
    needs to be matched. A dispute webhook's `data.dispute` is read by disputes.py, as the
    dispute calls' answers are; one it cannot read is NoticeMalformed."""
    data = payload.get("data") if isinstance(payload.get("data"), dict) else {}
    if isinstance(data.get("dispute"), dict):
        try:
            return DisputeNotice(dispute_found(data["dispute"], order=data.get("order_details")))
        except CashfreeError as exc:
            raise NoticeMalformed(f"dispute webhook: {exc}") from None
    if isinstance(data.get("settlement"), dict):
        # The description's SettlementWebhook: data.settlement is a SettlementEntity, read as
        # the settlements call's answer is.
        try:
            return SettlementNotice(settlement_found(settlement_entity(data["settlement"])))
        except CashfreeError as exc:
            raise NoticeMalformed(f"settlement webhook: {exc}") from None
    if isinstance(data.get("refund"), dict):
        refund = refund_entity(data["refund"])
        answer = _final(answers.refund_answer, refund) if refund.status in answers.REFUND_FINAL else None
        return RefundNotice(order_ref=refund.order_id, refund_ref=refund.refund_id,
                            amount=_amount(data["refund"].get("refund_amount")), answer=answer)
    if isinstance(data.get("payment"), dict):
        order = data.get("order") if isinstance(data.get("order"), dict) else {}
        found = payment_entity({"order_id": order.get("order_id"), **data["payment"]})
        return PaymentNotice(order_ref=str(order.get("order_id") or found.order_id),
                             amount=_amount(data["payment"].get("payment_amount")),
                             answer=_final(answers.payment_answer, found), attempt_ref=found.cf_payment_id)
    return None


def notice_confirm(client: CashfreeClient, notice: PaymentNotice):
    """Cashfree's status query of the order behind a DECLINED notice (the protocol's
    notice_confirm): an approved attempt wins; the decline stands only when the newest attempt
    is the notice's own and failed; else None. Cashfree sends failures of every attempt of an
    order, and its own guidance is that only SUCCESS is terminal."""
    try:
        found = client.get_payments(notice.order_ref)
    except (CashfreeError, ValueError) as exc:
        raise AcquirerUnavailable(f"Cashfree's status query of order {notice.order_ref} failed: "
                                  f"{type(exc).__name__}") from exc
    if any(p.status in answers.APPROVED for p in found):
        return answers.order_answer(found)
    latest = answers.newest(found)
    if latest is None or latest.cf_payment_id != notice.attempt_ref or latest.status not in answers.DECLINED:
        return None
    return answers.payment_answer(latest)
