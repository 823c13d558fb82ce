"""The sandbox's notices, as a real acquirer's webhooks are: a signed JSON body delivered to
POST /acquirer/sandbox/webhooks, verified and parsed into the neutral values of
payments.acquirer.base by the same reading as its status query (acquirer.py's answers).

A delivery carries `x-sandbox-timestamp` (epoch milliseconds) and `x-sandbox-signature`, the
lowercase hex HMAC-SHA256 of timestamp + "." + raw body, keyed with a key derived from
DJANGO_SECRET_KEY (staging only: the sandbox answers 404 in production). At most MAX_AGE_SECONDS
old. The body:

    {"type": "payment", "order": "<sabpaisaTxnId>", "status": "APPROVED" | "DECLINED" | "PENDING",
     "reference": "<RRN>", "message": "...", "amount": <paise>}
    {"type": "refund", "order": "<sabpaisaTxnId>", "refund": "<refundId>", "status": ..., ...}
"""
from __future__ import annotations

import hashlib
import hmac
import json
import time
from datetime import datetime, timezone
from typing import Mapping

from django.conf import settings

from payments.acquirer.base import (
    AcquirerAnswer,
    NoticeDelivery,
    NoticeMalformed,
    NoticeNotFresh,
    NoticeRejected,
    Outcome,
    PaymentNotice,
    RefundNotice,
)

MAX_AGE_SECONDS = 300
SIGNATURE_HEADER = "x-sandbox-signature"
TIMESTAMP_HEADER = "x-sandbox-timestamp"
_FINAL = {"APPROVED": Outcome.APPROVED, "DECLINED": Outcome.DECLINED}


def _key() -> bytes:
    return hmac.new(settings.SECRET_KEY.encode(), b"sandbox acquirer notices", hashlib.sha256).digest()


def notice_signed(body: dict, *, now: float | None = None) -> tuple[dict[str, str], bytes]:
    """The headers and raw body of a delivery of `body`, signed as the sandbox signs."""
    raw = json.dumps(body, separators=(",", ":")).encode()
    timestamp = str(int((time.time() if now is None else now) * 1000))
    signature = hmac.new(_key(), timestamp.encode() + b"." + raw, hashlib.sha256).hexdigest()
    return {"Content-Type": "application/json", TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: signature}, raw


def notice_verify(*, headers: Mapping[str, str], raw_body: bytes, now: float | None = None) -> NoticeDelivery:
    lowered = {key.lower(): value for key, value in headers.items()}
    timestamp, signature = lowered.get(TIMESTAMP_HEADER, ""), lowered.get(SIGNATURE_HEADER, "")
    if not (timestamp.isascii() and timestamp.isdigit()) or len(timestamp) > 16 or not signature:
        raise NoticeRejected(f"missing or malformed {TIMESTAMP_HEADER} / {SIGNATURE_HEADER}")
    expected = hmac.new(_key(), timestamp.encode() + b"." + raw_body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
        raise NoticeRejected("signature does not match")
    sent = int(timestamp) / 1000
    if abs((time.time() if now is None else now) - sent) > MAX_AGE_SECONDS:
        raise NoticeNotFresh(f"timestamp is more than {MAX_AGE_SECONDS} s off")
    try:
        payload = json.loads(raw_body)
    except ValueError:
        raise NoticeMalformed("body is not JSON") from None
    if not isinstance(payload, dict):
        raise NoticeMalformed("body is not a JSON object")
    return NoticeDelivery(payload=payload, sent_at=datetime.fromtimestamp(sent, tz=timezone.utc),
                          event_type=str(payload.get("type") or "")[:60])


def answer_of(payload: Mapping) -> AcquirerAnswer | None:
    """The answer a notice's status stands for, as the sandbox's calls answer it; None: not final."""
    outcome = _FINAL.get(str(payload.get("status") or ""))
    if outcome is None:
        return None
    return AcquirerAnswer(outcome, reference=str(payload.get("reference") or "")[:40],
                          message=str(payload.get("message") or "")[:200], raw={"result": "notice"})


def notice_parse(payload: dict) -> PaymentNotice | RefundNotice | None:
    amount = payload.get("amount")
    amount = amount if isinstance(amount, int) and not isinstance(amount, bool) else None
    order = str(payload.get("order") or "")
    if payload.get("type") == "payment":
        return PaymentNotice(order_ref=order, amount=amount, answer=answer_of(payload),
                             attempt_ref=str(payload.get("attempt") or ""))
    if payload.get("type") == "refund":
        return RefundNotice(order_ref=order, refund_ref=str(payload.get("refund") or ""), amount=amount,
                            answer=answer_of(payload))
    return None
