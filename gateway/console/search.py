"""One search box for every identifier a payment (or a refund) is known by.

Staff paste whatever the caller has: the gateway's sabpaisaTxnId or paymentId, the
merchant's order number (merchantTxnId), the bank's reference (RRN), a NEFT/RTGS/challan
reference, the customer's email or phone, a refund's bank reference, a webhook event id.
The term's shape says which identifiers it can be; each of those is an exact lookup on an
index (payments.selectors), joined with OR. No `icontains`: on a table of
millions a substring search reads every row.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from gateway.platform.models import Merchant
from payments import selectors as payment_selectors
from refunds import selectors as refund_selectors
from webhooks import selectors as webhook_selectors

SABPAISA_TXN_ID = re.compile(r"SP[A-Z0-9]{18}")
# Bank, transfer and refund references: letters, digits and a few separators, no spaces.
REFERENCE = re.compile(r"[A-Za-z0-9_/-]{4,40}")


@dataclass(frozen=True)
class Identifier:
    name: str   # shown to staff: "customer phone"
    q: Q


def identifiers_for(term: str) -> list[Identifier]:
    """The identifiers `term` can be, most specific first, each with its exact lookup."""
    term = term.strip()
    if not term:
        return []
    found: list[Identifier] = []
    upper = term.upper()
    if SABPAISA_TXN_ID.fullmatch(upper):
        found.append(Identifier("sabpaisaTxnId", Q(sabpaisa_txn_id=upper)))
    if term.startswith("pay_"):
        found.append(Identifier("paymentId", Q(payment_id=term)))
    if term.startswith("evt_"):
        # Resolved first (one primary-key lookup): an OR with a subquery in it cannot be
        # answered from indexes, and PostgreSQL would read the whole payments table.
        subjects = webhook_selectors.event_subject_ids(term)
        found.append(Identifier("webhook event id", Q(sabpaisa_txn_id__in=subjects)))
    found += [Identifier(name, q) for name, q in payment_selectors.payment_contact_conditions(term)]
    if REFERENCE.fullmatch(term):
        found.append(Identifier("bank reference (RRN)", Q(bank_rrn=term)))
        # Resolved first, like the two below: nearly every payment's transfer reference is
        # empty, so a generic plan (a prepared statement's, the term unknown) takes the branch
        # to match every row, and with the LIMIT read the payments table from end to end (2.8 s
        # at 5 million payments) rather than the index that holds the non-empty ones.
        transferred = payment_selectors.payment_pks_where(Q(transfer_reference__in={upper, term}))
        found.append(Identifier("transfer reference", Q(pk__in=transferred)))
        refunded = refund_selectors.refund_payment_pks_by_bank_reference(term)
        found.append(Identifier("refund bank reference", Q(pk__in=refunded)))
    if len(term) <= payment_selectors.MERCHANT_TXN_ID_MAX_LENGTH:
        # The merchant's own order number can look like anything, so it is always tried.
        found.append(Identifier("merchantTxnId", Q(merchant_txn_id=term)))
    return found


def payment_search(queryset: QuerySet, term: str) -> tuple[QuerySet, list[Identifier]]:
    """`queryset` narrowed to the payments `term` identifies, and the identifiers tried."""
    identifiers = identifiers_for(term)
    if not identifiers:
        return queryset.none(), []
    condition = Q()
    for identifier in identifiers:
        condition |= identifier.q
    return payment_selectors.payments_searchable(queryset).filter(condition), identifiers


def refund_search(queryset: QuerySet, term: str) -> QuerySet:
    """`queryset` (of refunds) narrowed to those `term` names exactly: refundId, the bank's
    refund reference, the payment's sabpaisaTxnId or merchantTxnId, or the merchant's code."""
    term = term.strip()
    if not term:
        return queryset
    return _by_own_payment_or_merchant(queryset, term, own=Q(refund_id=term) | Q(bank_refund_reference=term),
                                       payment=Q(sabpaisa_txn_id=term) | Q(merchant_txn_id=term))


def token_search(queryset: QuerySet, term: str) -> QuerySet:
    """`queryset` (of card tokens) narrowed to those `term` names exactly: tokenId, the paymentId
    or sabpaisaTxnId of the payment it was saved in, or the merchant's code."""
    term = term.strip()
    if not term:
        return queryset
    return _by_own_payment_or_merchant(queryset, term, own=Q(token_id=term),
                                       payment=Q(payment_id=term) | Q(sabpaisa_txn_id=term.upper()))


def _by_own_payment_or_merchant(queryset: QuerySet, term: str, *, own: Q, payment: Q) -> QuerySet:
    """`queryset` (of a model with `payment` and `merchant` keys) narrowed to the rows `own`
    matches, or whose payment `payment` matches, or whose merchant's code is `term`. The
    payment and merchant keys are resolved first, as payment_search does for webhook events,
    so every branch of the OR is an index on the queryset's own table."""
    payments = payment_selectors.payment_pks_where(payment)
    merchants = list(Merchant.objects.filter(code=term).values_list("pk", flat=True))
    return queryset.filter(own | Q(payment__in=payments) | Q(merchant__in=merchants))


def matched_by(payment, term: str) -> str:
    """Which identifier of `payment` (a payments.models.Payment) the term is, for the "found by"
    message."""
    term = term.strip()
    checks = [
        ("sabpaisaTxnId", payment.sabpaisa_txn_id == term.upper()),
        ("paymentId", payment.payment_id == term),
        ("merchantTxnId", payment.merchant_txn_id == term),
        ("bank reference (RRN)", bool(payment.bank_rrn) and payment.bank_rrn == term),
        ("transfer reference", bool(payment.transfer_reference) and payment.transfer_reference in (term, term.upper())),
    ]
    for name, matched in checks:
        if matched:
            return name
    contact = payment_selectors.payment_contact_matched(payment, term)
    if contact:
        return contact
    if term.startswith("evt_"):
        return "webhook event id"
    return "refund bank reference"
