"""The dispute record as merchants see it (API responses) and as webhooks carry it
(dispute.opened, dispute.updated, dispute.closed). Documented in docs/disputes.md.

camelCase; amounts in integer paise; times ISO 8601 UTC ('...Z') or null; statuses upper case,
as payments' and refunds' are.
"""
from __future__ import annotations

from datetime import datetime, timezone

from refunds.models import Dispute
from webhooks.payloads import event_timestamp

OPENED = "dispute.opened"
UPDATED = "dispute.updated"
CLOSED = "dispute.closed"
EVENT_TYPES = (OPENED, UPDATED, CLOSED)


def iso_utc(value: datetime | None) -> str | None:
    """An aware time as the API writes it, ISO 8601 in UTC ('...Z'), or None."""
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z") if value else None


def dispute_status_word(status: str) -> str:
    """open -> OPEN: how the API writes a status."""
    return status.upper()


def dispute_record(dispute: Dispute) -> dict:
    payment = dispute.payment
    return {
        "disputeId": dispute.dispute_id,
        "merchantId": dispute.merchant.code,
        "sabpaisaTxnId": payment.sabpaisa_txn_id,
        "txnId": payment.sabpaisa_txn_id,
        "paymentId": payment.payment_id,
        "merchantTxnId": payment.merchant_txn_id,
        "type": dispute.kind.upper(),
        "status": dispute_status_word(dispute.status),
        "processorStatus": dispute.processor_status or None,
        "reasonCode": dispute.reason_code or None,
        "reasonDescription": dispute.reason_text or None,
        "amount": dispute.amount,
        "currency": dispute.currency,
        "respondBy": iso_utc(dispute.respond_by),
        "preferredEvidence": [{"type": item.get("code", ""), "description": item.get("description", "")}
                              for item in dispute.preferred_evidence],
        "evidenceSubmitted": dispute.evidence_submitted_at is not None,
        "evidenceSubmittedAt": iso_utc(dispute.evidence_submitted_at),
        "evidence": list(dispute.evidence),
        "acceptedAt": iso_utc(dispute.accepted_at),
        "outcome": dispute_status_word(dispute.status) if dispute.is_final else None,
        "remarks": dispute.remarks or None,
        "openedAt": iso_utc(dispute.opened_at),
        "resolvedAt": iso_utc(dispute.resolved_at),
        "createdAt": iso_utc(dispute.created_at),
        "updatedAt": iso_utc(dispute.updated_at),
    }


def dispute_webhook_payload(dispute: Dispute, *, event_type: str, event_pk: int) -> dict:
    """The record with `event`, the live SabPaisa webhook's `timestamp` and an
    `idempotency_key` naming this one change (`<disputeId>_<the story's event number>`): a
    dispute is updated many times, so its status alone would not name the event."""
    return {
        "event": event_type,
        **dispute_record(dispute),
        "timestamp": event_timestamp(),
        "idempotency_key": f"{dispute.dispute_id}_{event_pk}",
    }
