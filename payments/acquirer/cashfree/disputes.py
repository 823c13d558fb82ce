"""What a Cashfree dispute says, as the protocol's neutral DisputeFound: the one reading of
Cashfree's dispute entity, used by the adapter's dispute calls (acquirer.py) and by the dispute
webhooks (notices.py) alike, so that a dispute stands the same whichever the gateway hears first.

Cashfree's statuses are `<TYPE>_<STAGE>` (DisputesEntity.dispute_status in the vendored
description: DISPUTE_, CHARGEBACK_, RETRIEVAL_, PRE_ARBITRATION_, ARBITRATION_ with CREATED,
DOCS_RECEIVED, UNDER_REVIEW, MERCHANT_WON, MERCHANT_LOST, MERCHANT_ACCEPTED,
INSUFFICIENT_EVIDENCE). The stage maps onto the gateway's statuses (STAGES below); the type is
the dispute's kind. A CREATED case whose webhook says the action is Cashfree's own
(`dispute_action_on` other than MERCHANT) is open, not yet the merchant's to answer.

Times: the description's examples write them without an offset (2023-01-19T00:00:00), Cashfree's
webhooks with +05:30. Cashfree is an Indian processor and its dashboard shows IST: a time
without an offset is read as Asia/Kolkata, then held as an aware time. Cashfree writes
9999-09-09 for "not resolved": read as none.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from payments.acquirer.base import (
    DISPUTE_ACCEPTED,
    DISPUTE_KINDS,
    DISPUTE_LOST,
    DISPUTE_NEEDS_RESPONSE,
    DISPUTE_OPEN,
    DISPUTE_UNDER_REVIEW,
    DISPUTE_WON,
    DisputeEvidenceType,
    DisputeFound,
)

from .errors import CashfreeBadResponse
from .money import rupees_to_paise

IST = timezone(timedelta(hours=5, minutes=30))

# Cashfree's stage (the status after its type) -> the gateway's status.
STAGES = {
    "CREATED": DISPUTE_NEEDS_RESPONSE,
    "INSUFFICIENT_EVIDENCE": DISPUTE_NEEDS_RESPONSE,  # Cashfree asks for more: the merchant answers again
    "DOCS_RECEIVED": DISPUTE_UNDER_REVIEW,
    "UNDER_REVIEW": DISPUTE_UNDER_REVIEW,
    "MERCHANT_WON": DISPUTE_WON,
    "MERCHANT_LOST": DISPUTE_LOST,
    "MERCHANT_ACCEPTED": DISPUTE_ACCEPTED,
}
TYPES = {kind.upper(): kind for kind in DISPUTE_KINDS}
# Cashfree's "no date yet".
_UNSET_YEAR = 9999


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip().strip('"')


def cashfree_time(value: Any) -> datetime | None:
    """A time as Cashfree writes it, aware; none for absent, unreadable or 9999 (module docstring)."""
    text = _text(value).replace(" ", "T", 1)
    if not text:
        return None
    try:
        found = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if found.year >= _UNSET_YEAR:
        return None
    return found if found.tzinfo is not None else found.replace(tzinfo=IST)


def status_of(processor_status: str, *, action_on: str = "") -> tuple[str, str]:
    """(the gateway's status, the kind) of Cashfree's `dispute_status`. CashfreeBadResponse for a
    status the description does not list."""
    word = processor_status.upper()
    for kind_word, kind in sorted(TYPES.items(), key=lambda item: -len(item[0])):
        if word.startswith(kind_word + "_") and word[len(kind_word) + 1:] in STAGES:
            status = STAGES[word[len(kind_word) + 1:]]
            if status == DISPUTE_NEEDS_RESPONSE and word.endswith("_CREATED") and action_on \
                    and action_on.upper() != "MERCHANT":
                status = DISPUTE_OPEN
            return status, kind
    raise CashfreeBadResponse(f"Cashfree dispute status {processor_status!r} is not one it documents")


def _evidence_types(value: Any) -> tuple[DisputeEvidenceType, ...]:
    items = value.get("preferred_evidence") if isinstance(value, dict) else value  # its example nests it once
    if not isinstance(items, list):
        return ()
    return tuple(DisputeEvidenceType(code=_text(item.get("document_type"))[:80],
                                     description=_text(item.get("document_description"))[:300])
                 for item in items if isinstance(item, dict) and _text(item.get("document_type")))


def dispute_found(entity: Any, *, order: Any = None) -> DisputeFound:
    """Cashfree's dispute (a DisputesEntity of its dispute calls, or a dispute webhook's
    `data.dispute` with the webhook's `data.order_details` as `order`) as a DisputeFound.
    CashfreeBadResponse when it is not one."""
    if not isinstance(entity, dict) or _text(entity.get("dispute_id")) == "":
        raise CashfreeBadResponse("a Cashfree dispute had no dispute_id")
    order = order if isinstance(order, dict) else entity.get("order_details")
    order = order if isinstance(order, dict) else {}
    processor_status = _text(entity.get("dispute_status"))
    status, kind = status_of(processor_status, action_on=_text(entity.get("dispute_action_on")))
    declared = _text(entity.get("dispute_type")).upper()
    try:
        amount = rupees_to_paise(entity["dispute_amount"]) if entity.get("dispute_amount") is not None else None
    except (TypeError, ValueError):
        raise CashfreeBadResponse("a Cashfree dispute's amount was not an amount in rupees") from None
    evidence = entity.get("dispute_evidence") if isinstance(entity.get("dispute_evidence"), list) else []
    return DisputeFound(
        processor_id=_text(entity.get("dispute_id")),
        order_ref=_text(order.get("order_id")),
        status=status,
        processor_status=processor_status,
        kind=TYPES.get(declared, kind),
        amount=amount,
        reason_code=_text(entity.get("reason_code"))[:32],
        reason_text=_text(entity.get("reason_description"))[:300],
        respond_by=cashfree_time(entity.get("respond_by")),
        opened_at=cashfree_time(entity.get("created_at")),
        updated_at=cashfree_time(entity.get("updated_at")),
        resolved_at=cashfree_time(entity.get("resolved_at")),
        remarks=_text(entity.get("cf_dispute_remarks"))[:500],
        preferred_evidence=_evidence_types(entity.get("preferred_evidence")),
        evidence=tuple(_text(item.get("document_name") or item.get("document_type"))[:200]
                       for item in evidence if isinstance(item, dict)),
        raw={"dispute_id": _text(entity.get("dispute_id")), "dispute_status": processor_status,
             "dispute_type": declared},
    )
