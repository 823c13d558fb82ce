"""A payment's whole story, in time order, for its page in the console.

Gathered from the rows that are the truth of each part, never from logs:
- payments.PaymentEvent: status changes, the acquirer's answers, the redirect back to the merchant;
- webhooks: every event recorded for the payment or one of its refunds (subject_id is the
  sabpaisaTxnId or the refundId), each delivery and each attempt;
- refunds and their RefundEvent timeline;
- disputes and their DisputeEvent story, opening to outcome;
- card tokens made from the payment or used to pay it;
- the audit log's staff actions on any of these.

A fixed number of queries whatever the payment's history (each part is one query, with its
children prefetched). Each app's rows are read through its selectors (payments, refunds,
webhooks, tokens); the kinds of events are asked of the rows themselves (`event.Kind`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Q
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from gateway.console.kit.days import local
from gateway.console.kit.display import money
from gateway.platform.models import AuditRecord
from refunds import selectors as refund_selectors
import refunds.disputes.selectors as dispute_selectors
from tokens import selectors as token_selectors
from webhooks import selectors as webhook_selectors

DETAIL_MAX_CHARS = 300

# What a staff action's audit record shows on the payment's page (the record has the rest).
STAFF_DETAILS = ("refundId", "refundAmount", "reason", "errorCode", "errorMessage", "event_id", "status")

STAFF_ACTIONS = {
    "refund.initiate": "started a refund",
    "refund.initiate_refused": "tried to start a refund, refused",
    "webhook.resend": "resent a webhook",
    "webhook.test_send": "sent a test webhook",
    "token.delete": "deleted the card token",
}


def _value(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= DETAIL_MAX_CHARS else text[:DETAIL_MAX_CHARS] + "…"


def _details(detail: dict | None, skip=()) -> list[tuple[str, str]]:
    return [(key, _value(value)) for key, value in (detail or {}).items()
            if key not in skip and value not in ("", None, [], {})]


def _when(moment: datetime) -> str:
    return f"{local(moment):%Y-%m-%d %H:%M:%S} IST"


def _url(name: str, *args) -> str | None:
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return None


@dataclass
class Entry:
    at: datetime
    category: str      # status, acquirer, redirect, reversal, note, webhook, attempt, refund, bank, staff, token
    title: str
    details: list[tuple[str, str]] = field(default_factory=list)
    link: tuple[str, str] | None = None        # (address, label)
    delivery: object | None = None             # a webhooks WebhookDelivery: the resend button acts on it
    sequence: int = 0                          # keeps rows written in the same instant in order


@dataclass
class PaymentStory:
    payment: object                            # a payments Payment
    entries: list[Entry]
    refunds: list                              # its refunds.models.Refund rows
    deliveries: list                           # its webhooks.models.WebhookDelivery rows
    totals: dict[str, str]
    refundable: int
    # Refunds made with an API key staff had already rotated away (in its grace period): the
    # separation-of-duties warning (docs/security.md).
    rotated_key_refunds: list[str] = field(default_factory=list)


def _rotated_key_refunds(refunds: list) -> list[str]:
    warnings = []
    for refund in refunds:
        key = refund.api_key
        if key is not None and key.was_rotated_before(refund.created_at):
            warnings.append(
                f"Refund {refund.refund_id} of {money(refund.amount)} was made with API key {key.prefix}…, which "
                f"{key.rotated_by or 'someone'} had rotated at {timezone.localtime(key.rotated_at):%Y-%m-%d %H:%M:%S} "
                f"IST; the key still worked only because it was in its grace period.")
    return warnings


def _route_details(took: str, route: dict) -> list[tuple[str, str]]:
    """The route a payment took, a line per acquirer in the order tried: which failed and why,
    and which took it. Not the stored dict as JSON: its keys come back in the database's order
    and, cut at DETAIL_MAX_CHARS, it lost the failed acquirer's name (issue 33)."""
    tried = [str(name) for name in route.get("tried") or [took]]
    rows = [("route", " → ".join(tried))]
    for failed in route.get("failed") or []:
        if isinstance(failed, dict):
            rows.append((str(failed.get("acquirer", "?")), _value(
                f"failed technically ({failed.get('failure', '?')}): {failed.get('message', '')}".rstrip(": "))))
    rows.append((took, _value(f"took it ({route.get('why', '')})")))
    return rows


def _payment_entries(payment) -> list[Entry]:
    entries = []
    for event in payment.events.all():
        if event.kind == event.Kind.STATUS:
            moved = f"{event.from_status} → {event.to_status}" if event.from_status else f"created {event.to_status}"
            title = f"Status {moved}"
            attempt = event.detail.get("attempt")
            if attempt:  # hosted retries: each method the customer tried is an attempt of its own
                what = {"failed": "failed", "abandoned": "left for another method"}.get(
                    event.detail.get("outcome"), "started")
                method = event.detail.get("method") or ""
                title = f"Attempt {attempt}{f' ({method})' if method else ''} {what}: {moved}"
        elif event.kind == event.Kind.ACQUIRER:
            step = event.detail.get("step")
            title = f"Acquirer answered{' ' + step if step else ''}: {event.detail.get('outcome', 'see details')}"
            route = event.detail.get("route")
            details = _details(event.detail, skip=("outcome", "step"))
            if isinstance(route, dict):  # the step that routed the payment (payments.services.routing)
                title += f" · routed to {event.detail.get('acquirer', '?')} ({route.get('why', '')})"
                details = _route_details(event.detail.get("acquirer", "?"), route) + [
                    (key, value) for key, value in details if key not in ("route", "acquirer")]
            elif event.detail.get("failed_over_to"):  # an approval where it failed over from (reversals)
                title += (f" at {event.detail.get('acquirer', '?')} after failing over to "
                          f"{event.detail['failed_over_to']}")
            entries.append(Entry(event.created_at, event.kind, title, details, sequence=event.pk))
            continue
        elif event.kind == event.Kind.REDIRECT:
            title = f"Customer sent back to the merchant ({event.detail.get('status', '')})"
        elif event.kind == event.Kind.REVERSAL:
            # A late approval given back (payments.services.reversals): its status changes and sends.
            # One at an acquirer the payment failed over from names it (Reversal.acquirer).
            where = f" at {event.detail['approvedAt']}" if event.detail.get("approvedAt") else ""
            if event.to_status:
                moved = f"{event.from_status} → {event.to_status}" if event.from_status else f"created {event.to_status}"
                title = f"Late approval {event.detail.get('approval', '')}{where}: reversal {moved}"
            else:
                title = f"Late approval {event.detail.get('approval', '')}{where}: {event.detail.get('action', 'reversal')}"
        else:
            title = "Note"
        entries.append(Entry(event.created_at, event.kind, title, _details(event.detail), sequence=event.pk))
    return entries


def _attempt_title(attempt) -> str:
    facts = [f"HTTP {attempt.http_status}" if attempt.http_status else "",
             f"{attempt.duration_ms} ms" if attempt.duration_ms is not None else ""]
    facts = ", ".join(fact for fact in facts if fact)
    return f"Webhook attempt #{attempt.number}: {attempt.get_outcome_display()}" + (f" ({facts})" if facts else "")


def _webhook_entries(events: list) -> tuple[list[Entry], list]:
    entries, deliveries = [], []
    for event in events:
        for delivery in event.deliveries.all():
            deliveries.append(delivery)
            details = [("event id", event.id), ("delivery", f"{delivery.get_status_display()}, "
                                                             f"{delivery.attempts} attempt(s)")]
            if delivery.next_attempt_at and delivery.status in delivery.DUE_STATUSES:
                details.append(("next attempt", _when(delivery.next_attempt_at)))
            if delivery.delivered_at:
                details.append(("delivered", _when(delivery.delivered_at)))
            entries.append(Entry(event.created_at, "webhook", f"Webhook {event.event_type} to the merchant",
                                 details, link=(_url("admin:webhooks_webhookdelivery_change", delivery.pk),
                                                "delivery log"), delivery=delivery, sequence=delivery.pk))
            for attempt in delivery.attempt_rows.all():
                details = _details({"address": attempt.url, "error": attempt.error,
                                    "answer": attempt.response_snippet})
                entries.append(Entry(attempt.started_at, "attempt", _attempt_title(attempt), details,
                                     link=(_url("admin:webhooks_webhookdelivery_change", delivery.pk),
                                           "signature explainer"), sequence=attempt.pk))
    return entries, deliveries


def _refund_entries(refunds: list) -> list[Entry]:
    entries = []
    for refund in refunds:
        link = (_url("admin:refunds_refund_change", refund.pk), refund.refund_id)
        for event in refund.events.all():
            if event.kind == event.Kind.STATUS and not event.from_status:
                title = f"Refund {refund.refund_id} of {money(refund.amount)} requested by {event.actor_name or 'system'}"
                category = "refund"
            elif event.kind == event.Kind.STATUS:
                title = f"Refund {refund.refund_id} {event.from_status} → {event.to_status}"
                category = "refund"
            else:
                title = f"Refund {refund.refund_id}: bank {event.detail.get('action', 'answer')}"
                category = "bank"
            entries.append(Entry(event.created_at, category, title,
                                 _details(event.detail, skip=("amount",)), link=link, sequence=event.pk))
    return entries


def _dispute_entries(disputes: list) -> list[Entry]:
    """The payment's disputes, opening to outcome (docs/disputes.md), each event linking its page."""
    entries = []
    for dispute in disputes:
        link = (_url("console:dispute", dispute.dispute_id), dispute.dispute_id)
        for event in dispute.events.all():
            if event.kind == event.Kind.STATUS and not event.from_status:
                title = (f"Dispute {dispute.dispute_id} ({dispute.get_kind_display()}) of {money(dispute.amount)} "
                         f"opened: {event.to_status.upper()}")
            elif event.kind == event.Kind.STATUS:
                title = f"Dispute {dispute.dispute_id} {event.from_status.upper()} → {event.to_status.upper()}"
            elif event.kind == event.Kind.ANSWER:
                title = f"Dispute {dispute.dispute_id}: {event.detail.get('action', 'answer')} by {event.actor_name}"
            elif event.kind == event.Kind.ALERT:
                title = f"Dispute {dispute.dispute_id}: deadline alert, {event.detail.get('hoursLeft')} h left"
            else:
                title = f"Dispute {dispute.dispute_id} updated by the processor"
            entries.append(Entry(event.created_at, "dispute", title, _details(event.detail), link=link,
                                 sequence=event.pk))
    return entries


def _token_entries(payment) -> tuple[list[Entry], list[str]]:
    entries, token_ids = [], []
    for token in token_selectors.tokens_made_from_payment(payment_pk=payment.pk):
        token_ids.append(str(token.pk))
        link = (_url("admin:tokens_token_change", token.pk), token.token_id)
        entries.append(Entry(token.created_at, "token", f"Card saved as token {token.token_id}",
                             [("card", f"{token.network} ****{token.last4}")], link=link, sequence=token.pk))
        if token.deleted_at:
            entries.append(Entry(token.deleted_at, "token", f"Token {token.token_id} deleted",
                                 [("by", token.deleted_by)], link=link, sequence=token.pk))
    for use in token_selectors.token_uses_of_payment(payment_pk=payment.pk):
        entries.append(Entry(use.created_at, "token", f"Paid with saved card token {use.token.token_id}",
                             link=(_url("admin:tokens_token_change", use.token_id), use.token.token_id),
                             sequence=use.pk))
    return entries, token_ids


def _staff_entries(payment, refunds, deliveries, token_ids) -> list[Entry]:
    # The audit log names an object by its model's label (gateway.platform.services.audit_record).
    objects = Q(object_type=payment._meta.label, object_id=str(payment.pk))
    for label, ids in (("refunds.Refund", [str(refund.pk) for refund in refunds]),
                       ("webhooks.WebhookDelivery", [str(delivery.pk) for delivery in deliveries]),
                       ("tokens.Token", token_ids)):
        if ids:
            objects |= Q(object_type=label, object_id__in=ids)
    entries = []
    for record in AuditRecord.objects.filter(objects).order_by("created_at", "id"):
        title = f"Staff {record.actor_name or 'unknown'} {STAFF_ACTIONS.get(record.action, record.action)}"
        details = [(key, value) for key, value in _details(record.after) if key in STAFF_DETAILS]
        entries.append(Entry(record.created_at, "staff", title, details,
                             link=(_url("admin:gateway_auditrecord_change", record.pk), "audit record"),
                             sequence=record.pk))
    return entries


def payment_story(payment) -> PaymentStory:
    """Everything that happened to `payment` (a payments.models.Payment), oldest first."""
    refunds = refund_selectors.refunds_with_events(payment=payment)
    disputes = dispute_selectors.disputes_with_events(payment=payment)
    subjects = [payment.sabpaisa_txn_id, *(refund.refund_id for refund in refunds),
                *(dispute.dispute_id for dispute in disputes)]
    events = webhook_selectors.events_with_deliveries(merchant_id=payment.merchant_id, subject_ids=subjects)
    webhook_entries, deliveries = _webhook_entries(events)
    token_entries, token_ids = _token_entries(payment)
    entries = [*_payment_entries(payment), *webhook_entries, *_refund_entries(refunds), *_dispute_entries(disputes),
               *token_entries,
               *_staff_entries(payment, refunds, deliveries, token_ids)]
    order = {"status": 0, "acquirer": 1, "redirect": 2, "note": 3, "refund": 4, "bank": 5, "dispute": 6, "token": 6,
             "webhook": 7, "attempt": 8, "staff": 9}
    entries.sort(key=lambda entry: (entry.at, order.get(entry.category, 10), entry.sequence))
    refundable = refund_selectors.refundable_amount(payment)
    totals = {
        "amount": money(payment.amount),
        "paid": money(payment.paid_amount) if payment.paid_amount else "—",
        "refunded": money(payment.refunded_amount),
        "refund_pending": money(payment.refund_pending_amount),
        "refundable": money(refundable),
    }
    return PaymentStory(payment, entries, refunds, deliveries, totals, refundable,
                        rotated_key_refunds=_rotated_key_refunds(refunds))
