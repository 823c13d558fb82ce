"""The three-way reconciliation: our ledger (payments, refunds) ↔ the acquirer's settlement
lines ↔ the bank statement (docs/settlements.md, "Reconciliation").

Every check is one set-based statement over the whole period, never a loop over rows: a month
of a busy merchant is a million lines (benchmarks/reconcile.py). Each fault becomes a
ReconException, inserted with ON CONFLICT (kind, subject) DO NOTHING: running the
reconciliation again adds nothing it found before, and leaves a resolved exception resolved.

The checks (ReconException.Kind, each subject in brackets):

- not_settled [payment]: a SUCCESS payment completed in the period with no payment line,
  once its expected date (completed + SETTLE_AFTER) is past `as_of` and, when the settlements
  of the acquirer that took it are fetched (a SettlementFetch row of that acquirer), once that
  fetch has finished reading past the expected date: with two acquirers, a Razorpay payment is
  missing only when Razorpay's own report, read far enough, does not list it, never because
  Cashfree's does not, nor while Razorpay's fetch is down (docs/settlements.md, "Two acquirers").
  With an `as_of` other than now, a fetch is taken to be as far behind `as_of` as it is behind now.
- settled_twice [payment]: more than one payment line names the payment.
- amount_mismatch [line]: a payment line's amount differs from the payment's.
- fee_mismatch [line]: a payment line's fee differs from the merchant's agreed rate on the
  line's amount (MerchantFeeRate; the method's row, else the merchant's catch-all row; no row,
  no judgement), rounded half up to the paisa (arithmetic.agreed_fee).
- tax_not_gst [line]: any line's tax differs from 18 % of its fee, rounded half up
  (arithmetic.gst_on).
- refund_mismatch [refund]: a SUCCESS refund deducted by no refund line once past its
  expected date, or by more than one.
- unknown_reference [line]: a payment line naming no payment of ours, a refund line no refund,
  a chargeback naming an order we don't know.
- bank_unmatched [settlement]: a paid settlement (it has a UTR) with no bank credit of the
  same UTR and the same net amount, once a statement running to its payment date is in.
- unbalanced [settlement]: the settlement's stated gross, fees or tax differ from its lines'
  sums, or its net from gross − fees − tax − refunds − chargebacks ± adjustments.

The SQL below mirrors arithmetic.agreed_fee and gst_on exactly (integer division of
non-negative numbers: `(x * n + d / 2) / d`); tests/refunds/test_reconcile.py holds the two to
the same answers.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from datetime import timezone as dt_timezone

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from gateway.core.transactions import ensure_no_transaction
from payments.models import Payment
from refunds.models import (
    BankStatementLine,
    MerchantFeeRate,
    ReconException,
    Refund,
    Settlement,
    SettlementFetch,
    SettlementLine,
)
from refunds.settlements.arithmetic import BASIS_POINTS, GST_PERCENT

logger = logging.getLogger(__name__)

# A payment is settled T+1; one more day before it counts as missing (a weekend, a bank
# holiday, the acquirer's cut-off). A refund is deducted from the payout after it is made.
SETTLE_AFTER = timedelta(days=2)
# Bank dates are Indian dates.
BANK_TIME_ZONE = "Asia/Kolkata"

K = ReconException.Kind

_TABLES = {
    "payment": Payment._meta.db_table,
    "refund": Refund._meta.db_table,
    "settlement": Settlement._meta.db_table,
    "line": SettlementLine._meta.db_table,
    "bank": BankStatementLine._meta.db_table,
    "rate": MerchantFeeRate._meta.db_table,
    "exception": ReconException._meta.db_table,
    "fetch": SettlementFetch._meta.db_table,
}

_INSERT = """
INSERT INTO {exception} (kind, subject, status, merchant_id, settlement_id, line_id, payment_id, refund_id,
                         bank_line_id, expected, actual, evidence, resolution_note, created_at)
SELECT %(kind)s, x.subject, 'open', x.merchant_id, x.settlement_id, x.line_id, x.payment_id, x.refund_id,
       x.bank_line_id, x.expected, x.actual, x.evidence, '', %(now)s
FROM ({select}) AS x
ON CONFLICT (kind, subject) DO NOTHING
"""

# The lines of the settlements in the period, with their settlement's merchant.
_LINES = """
(SELECT l.*, s.merchant_id AS settlement_merchant_id FROM {line} l JOIN {settlement} s ON s.id = l.settlement_id
 WHERE s.settled_at >= %(start)s AND s.settled_at < %(end)s)
"""

_CHECKS: dict[str, str] = {
    K.NOT_SETTLED: """
SELECT 'payment:' || p.id AS subject, p.merchant_id, NULL::bigint AS settlement_id, NULL::bigint AS line_id,
       p.id AS payment_id, NULL::bigint AS refund_id, NULL::bigint AS bank_line_id, p.amount AS expected,
       0::bigint AS actual,
       jsonb_build_object('sabpaisaTxnId', p.sabpaisa_txn_id, 'completed_at', p.completed_at,
                          'expected_by', p.completed_at + %(settle_after)s,
                          'acquirer', coalesce(nullif(p.acquirer, ''), %(configured)s)) AS evidence
FROM {payment} p
WHERE p.status = 'SUCCESS' AND p.completed_at >= %(start)s AND p.completed_at < %(end)s
  AND p.completed_at < %(due)s
  AND NOT EXISTS (SELECT 1 FROM {line} l WHERE l.payment_id = p.id AND l.kind = 'payment')
  AND NOT EXISTS (SELECT 1 FROM {fetch} f WHERE f.acquirer = coalesce(nullif(p.acquirer, ''), %(configured)s)
                  AND (f.finished_until IS NULL OR f.finished_until + %(shift)s < p.completed_at + %(settle_after)s))
""",
    K.SETTLED_TWICE: """
SELECT 'payment:' || l.payment_id AS subject, max(l.settlement_merchant_id) AS merchant_id,
       min(l.settlement_id) AS settlement_id, NULL::bigint AS line_id, l.payment_id, NULL::bigint AS refund_id,
       NULL::bigint AS bank_line_id, 1::bigint AS expected, count(*)::bigint AS actual,
       jsonb_build_object('lines', jsonb_agg(l.id ORDER BY l.id),
                          'events', jsonb_agg(l.processor_event_id ORDER BY l.id),
                          'settlements', jsonb_agg(DISTINCT l.settlement_id)) AS evidence
FROM """ + _LINES + """ l
WHERE l.kind = 'payment' AND l.payment_id IS NOT NULL
GROUP BY l.payment_id HAVING count(*) > 1
""",
    K.AMOUNT_MISMATCH: """
SELECT 'line:' || l.id AS subject, p.merchant_id, l.settlement_id, l.id AS line_id, p.id AS payment_id,
       NULL::bigint AS refund_id, NULL::bigint AS bank_line_id, p.amount AS expected, l.amount AS actual,
       jsonb_build_object('sabpaisaTxnId', p.sabpaisa_txn_id, 'event', l.processor_event_id,
                          'difference', l.amount - p.amount) AS evidence
FROM """ + _LINES + """ l JOIN {payment} p ON p.id = l.payment_id
WHERE l.kind = 'payment' AND l.amount <> p.amount
""",
    K.FEE_MISMATCH: """
SELECT 'line:' || x.id AS subject, x.merchant_id, x.settlement_id, x.id AS line_id, x.payment_id,
       NULL::bigint AS refund_id, NULL::bigint AS bank_line_id, x.agreed AS expected, x.fee AS actual,
       jsonb_build_object('event', x.processor_event_id, 'amount', x.amount, 'method', x.method,
                          'percent_bp', x.percent_bp, 'fixed', x.fixed) AS evidence
FROM (
  SELECT l.id, l.settlement_id, l.payment_id, l.processor_event_id, l.amount, l.fee, p.merchant_id, m.method,
         coalesce(own.percent_bp, any_method.percent_bp) AS percent_bp,
         coalesce(own.fixed, any_method.fixed) AS fixed,
         (l.amount * coalesce(own.percent_bp, any_method.percent_bp) + %(bp_half)s) / %(bp)s
           + coalesce(own.fixed, any_method.fixed) AS agreed
  FROM """ + _LINES + """ l
  JOIN {payment} p ON p.id = l.payment_id
  CROSS JOIN LATERAL (SELECT CASE WHEN p.payment_mode <> '' THEN p.payment_mode
                                  WHEN p.s2s_mode <> '' THEN 'UPI' ELSE '' END AS method) m
  LEFT JOIN {rate} own ON own.merchant_id = p.merchant_id AND own.method = m.method AND m.method <> ''
  LEFT JOIN {rate} any_method ON any_method.merchant_id = p.merchant_id AND any_method.method = ''
  WHERE l.kind = 'payment' AND (own.id IS NOT NULL OR any_method.id IS NOT NULL)
) x
WHERE x.fee <> x.agreed
""",
    K.TAX_NOT_GST: """
SELECT 'line:' || l.id AS subject, coalesce(p.merchant_id, l.settlement_merchant_id) AS merchant_id,
       l.settlement_id, l.id AS line_id, l.payment_id, l.refund_id, NULL::bigint AS bank_line_id,
       (l.fee * %(gst)s + 50) / 100 AS expected, l.tax AS actual,
       jsonb_build_object('event', l.processor_event_id, 'kind', l.kind, 'fee', l.fee) AS evidence
FROM """ + _LINES + """ l LEFT JOIN {payment} p ON p.id = l.payment_id
WHERE l.tax <> (l.fee * %(gst)s + 50) / 100
""",
    K.REFUND_MISMATCH: """
SELECT 'refund:' || r.id AS subject, r.merchant_id, NULL::bigint AS settlement_id, NULL::bigint AS line_id,
       r.payment_id, r.id AS refund_id, NULL::bigint AS bank_line_id, 1::bigint AS expected,
       coalesce(d.n, 0)::bigint AS actual,
       jsonb_build_object('refundId', r.refund_id, 'amount', r.amount, 'processed_at', r.processed_at,
                          'deducted', coalesce(d.n, 0), 'lines', coalesce(d.ids, '[]'::jsonb)) AS evidence
FROM {refund} r
LEFT JOIN (SELECT refund_id, count(*) AS n, jsonb_agg(id ORDER BY id) AS ids FROM {line}
           WHERE kind = 'refund' AND refund_id IS NOT NULL GROUP BY refund_id) d ON d.refund_id = r.id
WHERE r.status = 'SUCCESS' AND r.processed_at >= %(start)s AND r.processed_at < %(end)s
  AND ((d.n IS NULL AND r.processed_at < %(due)s) OR d.n > 1)
""",
    K.UNKNOWN_REFERENCE: """
SELECT 'line:' || l.id AS subject, l.settlement_merchant_id AS merchant_id, l.settlement_id, l.id AS line_id,
       l.payment_id, NULL::bigint AS refund_id, NULL::bigint AS bank_line_id, NULL::bigint AS expected,
       l.amount AS actual,
       jsonb_build_object('event', l.processor_event_id, 'kind', l.kind, 'order', l.processor_order_id,
                          'refund', l.processor_refund_id) AS evidence
FROM """ + _LINES + """ l
WHERE (l.kind = 'payment' AND l.payment_id IS NULL)
   OR (l.kind = 'refund' AND l.refund_id IS NULL)
   OR (l.kind = 'chargeback' AND l.payment_id IS NULL AND l.processor_order_id <> '')
""",
    K.BANK_UNMATCHED: """
SELECT 'settlement:' || s.id AS subject, s.merchant_id, s.id AS settlement_id, NULL::bigint AS line_id,
       NULL::bigint AS payment_id, NULL::bigint AS refund_id, same_utr.id AS bank_line_id, s.net AS expected,
       same_utr.amount AS actual,
       jsonb_build_object('utr', s.utr, 'net', s.net, 'settled_at', s.settled_at,
                          'same_utr_amount', same_utr.amount, 'same_amount_utr', same_amount.utr) AS evidence
FROM {settlement} s
LEFT JOIN LATERAL (SELECT b.id, b.amount FROM {bank} b WHERE b.utr = s.utr ORDER BY b.id LIMIT 1) same_utr ON true
LEFT JOIN LATERAL (SELECT b.utr FROM {bank} b WHERE b.amount = s.net AND b.date = (s.settled_at AT TIME ZONE %(tz)s)::date
                   ORDER BY b.id LIMIT 1) same_amount ON true
WHERE s.settled_at >= %(start)s AND s.settled_at < %(end)s AND s.utr <> '' AND s.bank_line_id IS NULL
  AND (s.settled_at AT TIME ZONE %(tz)s)::date <= %(statement_until)s
""",
    K.UNBALANCED: """
SELECT 'settlement:' || s.id AS subject, s.merchant_id, s.id AS settlement_id, NULL::bigint AS line_id,
       NULL::bigint AS payment_id, NULL::bigint AS refund_id, NULL::bigint AS bank_line_id,
       t.gross - t.fees - t.tax - t.refunds - t.chargebacks + t.adjustments AS expected, s.net AS actual,
       jsonb_build_object('stated', jsonb_build_object('gross', s.gross, 'fees', s.fees, 'tax', s.tax, 'net', s.net),
                          'lines', jsonb_build_object('gross', t.gross, 'fees', t.fees, 'tax', t.tax,
                                                      'refunds', t.refunds, 'chargebacks', t.chargebacks,
                                                      'adjustments', t.adjustments)) AS evidence
FROM {settlement} s
JOIN (SELECT settlement_id,
             coalesce(sum(amount) FILTER (WHERE kind = 'payment'), 0) AS gross,
             sum(fee) AS fees, sum(tax) AS tax,
             coalesce(sum(amount) FILTER (WHERE kind = 'refund'), 0) AS refunds,
             coalesce(sum(amount) FILTER (WHERE kind = 'chargeback'), 0) AS chargebacks,
             coalesce(sum(amount) FILTER (WHERE kind = 'adjustment'), 0) AS adjustments
      FROM {line} GROUP BY settlement_id) t ON t.settlement_id = s.id
WHERE s.settled_at >= %(start)s AND s.settled_at < %(end)s
  AND (s.gross <> t.gross OR s.fees <> t.fees OR s.tax <> t.tax
       OR s.net <> t.gross - t.fees - t.tax - t.refunds - t.chargebacks + t.adjustments)
""",
}

# Each settlement in the period to the bank credit of its UTR and its net, one credit to one
# settlement (the first by id when a statement repeats a row).
_MATCH_BANK = """
UPDATE {settlement} s SET bank_line_id = m.bank_line_id
FROM (SELECT DISTINCT ON (b.utr, b.amount) b.utr, b.amount, b.id AS bank_line_id
      FROM {bank} b WHERE b.utr <> '' ORDER BY b.utr, b.amount, b.id) m
WHERE s.utr = m.utr AND s.net = m.amount AND s.bank_line_id IS NULL
  AND s.settled_at >= %(start)s AND s.settled_at < %(end)s
"""

_RECONCILED = "UPDATE {settlement} SET reconciled_at = %(now)s WHERE settled_at >= %(start)s AND settled_at < %(end)s"

_FAR_PAST = datetime(1970, 1, 1, tzinfo=dt_timezone.utc)
_FAR_FUTURE = datetime(9999, 1, 1, tzinfo=dt_timezone.utc)


@dataclass
class ReconResult:
    found: dict[str, int] = field(default_factory=dict)  # new exceptions by kind
    bank_matched: int = 0
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.found.values())


def reconcile(*, start: datetime | None = None, end: datetime | None = None,
              as_of: datetime | None = None) -> ReconResult:
    """Reconcile the settlements paid, and the payments and refunds completed, in [start, end)
    (None: unbounded) as things stand at `as_of` (default: now): match settlements to bank
    credits and record every fault as an open ReconException, once. Call it outside any
    transaction; it runs in one of its own, so a reconciliation is all recorded or not at all.
    Returns the new exceptions by kind."""
    ensure_no_transaction()
    now = timezone.now()
    as_of = as_of or now
    statement_until = BankStatementLine.objects.order_by("-date").values_list("date", flat=True).first()
    params = {"start": start or _FAR_PAST, "end": end or _FAR_FUTURE, "now": now, "due": as_of - SETTLE_AFTER,
              "settle_after": SETTLE_AFTER, "bp": BASIS_POINTS, "bp_half": BASIS_POINTS // 2, "gst": GST_PERCENT,
              "shift": as_of - now, "tz": BANK_TIME_ZONE, "configured": settings.GATEWAY_ACQUIRER,
              "statement_until": statement_until or date(1970, 1, 1)}
    result = ReconResult()
    started = timezone.now()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_MATCH_BANK.format(**_TABLES), params)
        result.bank_matched = cursor.rowcount
        for kind, select in _CHECKS.items():
            if kind == K.BANK_UNMATCHED and statement_until is None:
                continue  # no statement yet: nothing can be said about the bank
            sql = _INSERT.format(select=select.format(**_TABLES), **_TABLES)
            cursor.execute(sql, {**params, "kind": str(kind)})
            result.found[str(kind)] = cursor.rowcount
        cursor.execute(_RECONCILED.format(**_TABLES), params)
    result.seconds = (timezone.now() - started).total_seconds()
    logger.info("reconciled", extra={"found": result.found, "bank_matched": result.bank_matched,
                                     "seconds": result.seconds})
    return result
