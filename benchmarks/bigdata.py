"""A grown database for the big-data benchmark (benchmarks/grown.py): 18 months of a
gateway's history, written by PostgreSQL itself (INSERT ... SELECT over generate_series), so
five million payments take minutes, not the hours the API or the ORM would.

    python -m benchmarks.bigdata --payments 5000000 [--merchants 1000] [--months 18]
                                 [--merchant-code BENCH]   (run with DATABASE_URL set, migrated)

What it writes, per `payments` (every other count follows from it unless given):

- `merchants` merchants (at most 1,000), one of them optionally an existing merchant (the
  benchmark's own, whose keys it holds), which gets the largest share. Payments fall on merchants
  unevenly, as they do: merchant of rank r (0 first) takes a share ~ 1/sqrt(r), so the largest
  of 1,000 holds about 1.6% of everything and the smallest a handful of rows.
- payments over `months` months ending an hour ago, more each month (the density grows
  linearly with time: a business that grows), ids in creation order as the API gives them:
  40% S2S UPI, 60% hosted (UPI, card, net banking, wallet); 70% SUCCESS, 18% FAILED, 12% EXPIRED.
  Every status change has its PaymentEvent, in the order the transition table allows.
- refunds on 1 in 7 SUCCESS payments (about 10% of payments: 500,000 for 5 million), full
  or half, SUCCESS (with a bank reference), FAILED, or a few still INITIATED and flagged for
  review (the console's needs-attention queue); each with its RefundEvents. The payment's
  refunded_amount and refund_pending_amount are the sums of its SUCCESS and INITIATED refunds,
  written with the payment, so the project's own check (payments_with_refund_totals_off) holds.
- a webhook event, one delivery and its attempts for every payment that became final, and every
  refund that did, within the webhook history's retention (webhooks.retention's: older ones
  the retention sweep has deleted), about 3 million deliveries for 5 million payments: most
  delivered at the first attempt, some after retries, 1% dead after the whole retry schedule
  (settings.WEBHOOK_RETRY_SCHEDULE).

Foreign keys are not checked row by row during the fill (`session_replication_role =
replica` skips their triggers: the rows are written parents first and
tests/benchmarks/test_bigdata.py checks there is no orphan); every CHECK and UNIQUE constraint
is. The fill's own rows are marked: merchant codes BIG0001..., merchantTxnIds ORD-<n>,
sabpaisaTxnIds SPH<n>, refund ids rfnd_h<n>.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta


@dataclass
class Size:
    payments: int
    merchants: int = 0
    months: int = 18
    # Each payment story's first event is the payment's creation; the fill ends this long before now.
    end_before_now: timedelta = timedelta(hours=1)
    timings: dict = field(default_factory=dict)

    def __post_init__(self):
        if not self.merchants:
            self.merchants = max(3, min(1000, self.payments // 5000))


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S', time.gmtime())}Z] {message}", file=sys.stderr, flush=True)


# The status stories of a payment, one row per PaymentEvent: (flow, final status, step, from,
# to, where in [created, completed] it happens). They follow payments.state.TRANSITIONS.
STORIES = [
    ("S2S", "SUCCESS", 0, "", "PROCESSING", 0.0), ("S2S", "SUCCESS", 1, "PROCESSING", "SUCCESS", 1.0),
    ("S2S", "FAILED", 0, "", "PROCESSING", 0.0), ("S2S", "FAILED", 1, "PROCESSING", "FAILED", 1.0),
    ("S2S", "EXPIRED", 0, "", "PROCESSING", 0.0), ("S2S", "EXPIRED", 1, "PROCESSING", "EXPIRED", 1.0),
    ("HOSTED", "SUCCESS", 0, "", "PENDING", 0.0), ("HOSTED", "SUCCESS", 1, "PENDING", "PROCESSING", 0.6),
    ("HOSTED", "SUCCESS", 2, "PROCESSING", "SUCCESS", 1.0),
    # A failed attempt returns the session to PENDING; the customer then cancels.
    ("HOSTED", "FAILED", 0, "", "PENDING", 0.0), ("HOSTED", "FAILED", 1, "PENDING", "PROCESSING", 0.4),
    ("HOSTED", "FAILED", 2, "PROCESSING", "PENDING", 0.7), ("HOSTED", "FAILED", 3, "PENDING", "FAILED", 1.0),
    # Opened and never paid.
    ("HOSTED", "EXPIRED", 0, "", "PENDING", 0.0), ("HOSTED", "EXPIRED", 1, "PENDING", "EXPIRED", 1.0),
]

# A payment's refund is a function of its number n (merchantTxnId ORD-<n>), so the payment's
# refund totals can be written with the payment and the refund derived from it afterwards.
HAS_REFUND = "(status = 'SUCCESS' AND mod(n, 7) = 3)"
REFUND_STATUS = ("(CASE WHEN mod((n / 7), 2000) = 11 THEN 'INITIATED' "
                 "WHEN mod((n / 7), 50) < 3 THEN 'FAILED' ELSE 'SUCCESS' END)")
REFUND_AMOUNT = "(CASE WHEN mod((n / 7), 5) IN (1, 2) AND amount >= 2 THEN amount / 2 ELSE amount END)"


def _sql_story_values() -> str:
    return ", ".join(f"('{f}', '{s}', {i}, '{a}', '{b}', {w})" for f, s, i, a, b, w in STORIES)


def fill(size: Size, *, merchant_code: str | None = None, seed: float = 0.42, vacuum: bool = True) -> dict:
    """Write the history described above into the configured database (migrated, and holding
    `merchant_code` if given). Returns counts and the seconds each step took.

    Then VACUUM (ANALYZE), or with vacuum=False (inside a transaction: tests) ANALYZE alone.
    A live database's old rows have been vacuumed by autovacuum long ago: their pages are
    all-visible, so an index-only scan reads no heap for them. A fill measured without the
    vacuum would measure a state no deployment is in for more than the minutes after a bulk load."""
    from django.db import connection, transaction
    from django.utils import timezone

    from django.conf import settings

    from gateway.core.crypto import encrypt
    from gateway.platform.models import Merchant
    from webhooks.retention import WEBHOOK_HISTORY_RETENTION

    end = timezone.now() - size.end_before_now
    retries = len(settings.WEBHOOK_RETRY_SCHEDULE)  # a dead delivery had every retry: retries + 1 attempts
    start = end - timedelta(days=round(30.44 * size.months))
    secret = encrypt("big-data-fill-" + "x" * 24)  # one ciphertext for every filled merchant
    existing = None
    if merchant_code:
        existing = Merchant.objects.get(code=merchant_code).pk

    def step(name: str, sql: str, params=None) -> int:
        t0 = time.monotonic()
        with connection.cursor() as cur:
            cur.execute(sql, params)
            rows = cur.rowcount
        size.timings[name] = round(time.monotonic() - t0, 1)
        log(f"  {name}: {rows} rows in {size.timings[name]} s")
        return rows

    with transaction.atomic():
        with connection.cursor() as cur:
            cur.execute("SET LOCAL session_replication_role = replica")
            cur.execute("SET LOCAL synchronous_commit = off")
            cur.execute("SET LOCAL work_mem = '256MB'")
            cur.execute("SET LOCAL maintenance_work_mem = '512MB'")
            cur.execute("SELECT setseed(%s)", [seed])
            cur.execute("SELECT coalesce(max(id), 0) FROM payments_payment")
            first_payment = cur.fetchone()[0] + 1
            cur.execute("SELECT coalesce(max(id), 0) FROM refunds_refund")
            first_refund = cur.fetchone()[0] + 1
            cur.execute("SELECT coalesce(max(id), 0) FROM webhooks_webhookdelivery")
            first_delivery = cur.fetchone()[0] + 1
        log(f"filling {size.payments} payments, {size.merchants} merchants, {size.months} months to {end:%Y-%m-%d %H:%M}")

        # Merchants: rank 0 is the existing one, if any.
        step("merchants", f"""
            INSERT INTO gateway_merchant (code, name, is_active, s2s_enabled, webhook_url, rate_limit,
                secret_key_encrypted, webhook_secret_encrypted, created_at, updated_at, payment_methods,
                previous_webhook_secret_encrypted, previous_webhook_secret_expires_at, signed_requests_required,
                upi_collect)
            SELECT 'BIG' || lpad(r::text, 4, '0'), 'Grown Merchant ' || r, true, mod(r, 3) = 0,
                   'https://m' || r || '.merchant.example/webhooks', NULL, %(secret)s, %(secret)s,
                   %(start)s - interval '30 days', %(start)s, '{{}}'::jsonb, '', NULL, false, NULL
            FROM generate_series({1 if existing else 0}, %(m)s - 1) AS r""",
             {"secret": secret, "start": start, "m": size.merchants})
        with connection.cursor() as cur:
            cur.execute("CREATE TEMP TABLE fill_merchant (rank int PRIMARY KEY, id bigint) ON COMMIT DROP")
            cur.execute("""INSERT INTO fill_merchant SELECT substring(code from 4)::int, id FROM gateway_merchant
                           WHERE code ~ '^BIG[0-9]{4}$'""")
            if existing:
                cur.execute("INSERT INTO fill_merchant VALUES (0, %s)", [existing])
            cur.execute(f"CREATE TEMP TABLE fill_story (flow text, status text, step int, from_status text, "
                        f"to_status text, at float) ON COMMIT DROP")
            cur.execute(f"INSERT INTO fill_story VALUES {_sql_story_values()}")

        # Payments. r1 picks the merchant (rank ~ r1^2: 1/sqrt share), r2 the flow, r3 the status,
        # r4 the method and amount. Created at start + span * sqrt(n/N): linear growth.
        step("payments", f"""
            INSERT INTO payments_payment (flow, sabpaisa_txn_id, payment_id, merchant_txn_id, amount, currency,
                status, payment_mode, s2s_mode, customer_name, customer_email, customer_phone, description,
                metadata, udf, return_url, client_secret_hash, expires_at, bank_rrn, paid_amount, failure_reason,
                payer_vpa, card_last4, card_network, card_issuer, bank_code, transfer_reference, created_at,
                updated_at, completed_at, merchant_id, card_challenge_ref, acquirer_call_started_at, attempt,
                attempt_error, failed_attempts, language, order_details, webhook_url, refund_pending_amount,
                refunded_amount)
            SELECT flow, 'SPH' || lpad(n::text, 17, '0'), 'pay_h' || n, 'ORD-' || n, amount, 'INR',
                status, mode, CASE WHEN flow = 'S2S' THEN (CASE WHEN mod(n, 2) = 0 THEN 'UPI_QR' ELSE 'UPI_INTENT' END)
                                   ELSE '' END,
                'Customer ' || (mod(n, 9973)), 'customer' || (mod(n, 400009)) || '@mail.example',
                '9' || lpad((mod(n, 999999937))::text, 9, '0'), 'Order ' || n,
                '{{}}'::jsonb, jsonb_build_object('udf1', 'cart-' || (mod(n, 1000)), 'udf2', 'web'),
                CASE WHEN flow = 'HOSTED' THEN 'https://shop.merchant.example/return' ELSE '' END,
                CASE WHEN flow = 'HOSTED' THEN md5(n::text) || md5((n + 1)::text) ELSE '' END,
                created + CASE WHEN flow = 'HOSTED' THEN interval '30 minutes' ELSE interval '15 minutes' END,
                CASE WHEN status = 'SUCCESS' THEN lpad(mod(n * 7919, 999999999989)::text, 12, '0') ELSE '' END,
                CASE WHEN status = 'SUCCESS' THEN amount END,
                CASE status WHEN 'FAILED' THEN (CASE WHEN flow = 'HOSTED' THEN 'cancelled by the customer'
                                                     ELSE 'declined by the payer' END)
                            WHEN 'EXPIRED' THEN 'session expired' ELSE '' END,
                CASE WHEN mode = 'UPI' AND status <> 'EXPIRED' THEN 'payer' || (mod(n, 300007)) || '@okbank' ELSE '' END,
                CASE WHEN mode = 'CARD' THEN lpad((mod(n, 10000))::text, 4, '0') ELSE '' END,
                CASE WHEN mode = 'CARD' THEN (CASE WHEN mod(n, 2) = 0 THEN 'VISA' ELSE 'MASTERCARD' END) ELSE '' END,
                CASE WHEN mode = 'CARD' THEN 'HDFC Bank' ELSE '' END,
                CASE mode WHEN 'NB' THEN 'HDFC' WHEN 'WALLET' THEN 'PAYTM' ELSE '' END,
                '', created, completed, completed, merchant_id, '', NULL,
                CASE WHEN flow = 'HOSTED' AND mode <> '' THEN 1 ELSE 0 END,
                CASE WHEN flow = 'HOSTED' AND status = 'FAILED' THEN 'declined by the issuer' ELSE '' END,
                CASE WHEN flow = 'HOSTED' AND status = 'FAILED' THEN 1 ELSE 0 END,
                '', '{{}}'::jsonb, '',
                CASE WHEN {HAS_REFUND} AND {REFUND_STATUS} = 'INITIATED' THEN {REFUND_AMOUNT} ELSE 0 END,
                CASE WHEN {HAS_REFUND} AND {REFUND_STATUS} = 'SUCCESS' THEN {REFUND_AMOUNT} ELSE 0 END
            FROM (
                SELECT n, flow, status, amount, merchant_id, created,
                       CASE WHEN status = 'EXPIRED' THEN created + (CASE WHEN flow = 'HOSTED' THEN interval '30 minutes'
                                                                   ELSE interval '15 minutes' END)
                                                          + interval '20 seconds'
                            ELSE created + (5 + (mod(n, 170))) * interval '1 second' END AS completed,
                       CASE WHEN flow = 'S2S' THEN 'UPI'
                            WHEN status = 'EXPIRED' THEN ''
                            WHEN r4 < 0.45 THEN 'UPI' WHEN r4 < 0.75 THEN 'CARD' WHEN r4 < 0.9 THEN 'NB'
                            ELSE 'WALLET' END AS mode
                FROM (
                    SELECT g AS n, m.id AS merchant_id, r4,
                           CASE WHEN r2 < 0.4 THEN 'S2S' ELSE 'HOSTED' END AS flow,
                           CASE WHEN r3 < 0.70 THEN 'SUCCESS' WHEN r3 < 0.88 THEN 'FAILED' ELSE 'EXPIRED' END AS status,
                           greatest(100, (exp(ln(1000) + r4 * ln(10000)) * (0.5 + r3))::bigint) AS amount,
                           %(start)s + (%(end)s - %(start)s) * sqrt((g - 0.5) / %(n)s) AS created
                    FROM (SELECT g, random() AS r1, random() AS r2, random() AS r3, random() AS r4
                          FROM generate_series(1, %(n)s::bigint) AS g) AS draws
                    JOIN fill_merchant m ON m.rank = floor(%(m)s * r1 * r1)::int
                ) AS drawn
            ) AS p
            ORDER BY n""", {"start": start, "end": end, "n": size.payments, "m": size.merchants})

        step("payment events", f"""
            INSERT INTO payments_paymentevent (payment_id, kind, from_status, to_status, detail, created_at)
            SELECT p.id, 'status', s.from_status, s.to_status,
                   CASE WHEN s.to_status = 'PROCESSING' AND p.flow = 'HOSTED' THEN jsonb_build_object('attempt', 1)
                        ELSE '{{}}'::jsonb END,
                   p.created_at + (p.completed_at - p.created_at) * s.at
            FROM payments_payment p JOIN fill_story s ON s.flow = p.flow AND s.status = p.status
            WHERE p.id >= %(first)s
            ORDER BY p.id, s.step""", {"first": first_payment})

        step("refunds", f"""
            INSERT INTO refunds_refund (refund_id, amount, currency, status, reason, payment_mode, refund_method,
                bank_refund_reference, failure_reason, source, request_hash, bank_attempts, claimed_until,
                created_at, updated_at, processed_at, failed_at, initiated_by_id, merchant_id, payment_id,
                needs_review, api_key_id)
            SELECT 'rfnd_h' || n, ramount, 'INR', rstatus, 'customer returned the order', payment_mode,
                   payment_mode, CASE WHEN rstatus = 'SUCCESS' THEN 'RRF' || n ELSE '' END,
                   CASE WHEN rstatus = 'FAILED' THEN 'refused by the bank' ELSE '' END, 'API', '',
                   CASE WHEN rstatus = 'INITIATED' THEN 10 ELSE 1 END, NULL,
                   rcreated, CASE WHEN rstatus = 'INITIATED' THEN rcreated ELSE rdone END,
                   CASE WHEN rstatus = 'SUCCESS' THEN rdone END, CASE WHEN rstatus = 'FAILED' THEN rdone END,
                   NULL, merchant_id, id, rstatus = 'INITIATED', NULL
            FROM (
                SELECT *, CASE WHEN rcreated + interval '20 hours' <= %(end)s THEN rcreated + interval '20 hours'
                               ELSE rcreated + (%(end)s - rcreated) * 0.5 END AS rdone
                FROM (
                    -- A refund 1 to 29 days after the payment; one that would fall after the end
                    -- falls between the payment and the end instead (never all on one instant: a
                    -- list's page order would read them all as one tie).
                    SELECT id, n, merchant_id, payment_mode, {REFUND_STATUS} AS rstatus, {REFUND_AMOUNT} AS ramount,
                           CASE WHEN completed_at + (1 + mod(n, 29)) * interval '1 day' <= %(end)s - interval '1 hour'
                                THEN completed_at + (1 + mod(n, 29)) * interval '1 day' + mod(n, 3600) * interval '1 second'
                                ELSE completed_at + (%(end)s - completed_at) * (mod(n, 997) / 997.0) END AS rcreated
                    FROM (SELECT *, substring(merchant_txn_id from 5)::bigint AS n FROM payments_payment
                          WHERE id >= %(first)s AND status = 'SUCCESS') AS paid
                    WHERE {HAS_REFUND}
                ) AS r
            ) AS r
            ORDER BY rcreated, n""", {"first": first_payment, "end": end})

        step("refund events", """
            INSERT INTO refunds_refundevent (refund_id, kind, from_status, to_status, detail, actor_name, created_at)
            SELECT r.id, 'status', e.from_status, e.to_status, '{}'::jsonb, e.actor, e.at
            FROM refunds_refund r CROSS JOIN LATERAL (VALUES
                (0, '', 'INITIATED', 'merchant API', r.created_at),
                (1, 'INITIATED', r.status, 'system', r.updated_at)) AS e(step, from_status, to_status, actor, at)
            WHERE r.id >= %(first)s AND (e.step = 0 OR r.status <> 'INITIATED')
            ORDER BY r.id, e.step""", {"first": first_refund})

        # Webhook history within retention: payments' final statuses, then refunds'.
        cutoff = end + size.end_before_now - WEBHOOK_HISTORY_RETENTION + timedelta(hours=2)
        step("webhook events (payments)", """
            INSERT INTO webhooks_webhookevent (id, event_type, subject_id, payload, body, created_at, merchant_id)
            SELECT id, event_type, subject_id, payload, payload::text, created_at, merchant_id FROM (
                SELECT 'evt_' || left(md5('p' || p.id), 24) AS id, 'payment.' || lower(p.status) AS event_type,
                       p.sabpaisa_txn_id AS subject_id, p.completed_at AS created_at, p.merchant_id,
                       jsonb_build_object(
                           'event', 'payment.' || lower(p.status), 'txn_id', p.sabpaisa_txn_id,
                           'payment_id', p.payment_id, 'merchant_txn_id', p.merchant_txn_id, 'status', p.status,
                           'amount', p.amount, 'paid_amount', coalesce(p.paid_amount, 0), 'currency', 'INR',
                           'payment_mode', nullif(p.payment_mode, ''), 'bank_rrn', nullif(p.bank_rrn, ''),
                           'failure_reason', nullif(p.failure_reason, ''),
                           'created_at', to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                           'completed_at', to_char(p.completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                           'request_amount', p.amount, 'bank_txn_id', nullif(p.bank_rrn, ''),
                           'timestamp', extract(epoch FROM p.completed_at)::bigint,
                           'idempotency_key', p.sabpaisa_txn_id || '_' || p.status,
                           'udf_data', p.udf, 'metadata', p.metadata) || p.udf AS payload
                FROM payments_payment p
                WHERE p.id >= %(first)s AND p.completed_at >= %(cutoff)s
            ) AS e
            ORDER BY created_at""", {"first": first_payment, "cutoff": cutoff})
        step("webhook events (refunds)", """
            INSERT INTO webhooks_webhookevent (id, event_type, subject_id, payload, body, created_at, merchant_id)
            SELECT id, event_type, subject_id, payload, payload::text, created_at, merchant_id FROM (
                SELECT 'evt_' || left(md5('r' || r.id), 24) AS id,
                       CASE r.status WHEN 'SUCCESS' THEN 'refund.processed' ELSE 'refund.failed' END AS event_type,
                       r.refund_id AS subject_id, r.updated_at AS created_at, r.merchant_id,
                       jsonb_build_object(
                           'event', CASE r.status WHEN 'SUCCESS' THEN 'refund.processed' ELSE 'refund.failed' END,
                           'refundId', r.refund_id, 'sabpaisaTxnId', p.sabpaisa_txn_id, 'refundAmount', r.amount,
                           'status', r.status, 'bankRefundReference', nullif(r.bank_refund_reference, ''),
                           'paidAmountPaise', coalesce(p.paid_amount, p.amount), 'refundedAmount', p.refunded_amount,
                           'timestamp', extract(epoch FROM r.updated_at)::bigint) AS payload
                FROM refunds_refund r JOIN payments_payment p ON p.id = r.payment_id
                WHERE r.id >= %(first)s AND r.status <> 'INITIATED' AND r.updated_at >= %(cutoff)s
            ) AS e
            ORDER BY created_at""", {"first": first_refund, "cutoff": cutoff})

        # One delivery per event: 97% delivered at once, 2% after 2 or 3 attempts, 1% dead.
        step("webhook deliveries", f"""
            INSERT INTO webhooks_webhookdelivery (status, attempts, cycle_attempts, next_attempt_at, claim_token,
                last_attempt_at, delivered_at, created_at, updated_at, merchant_id, event_id, url)
            SELECT CASE WHEN tries = {retries + 1} THEN 'dead' ELSE 'delivered' END, tries, tries, NULL, '',
                   last_at, CASE WHEN tries = {retries + 1} THEN NULL ELSE last_at END, created_at, last_at,
                   merchant_id, id, ''
            FROM (
                SELECT e.id, e.created_at, e.merchant_id, t.tries,
                       e.created_at + (CASE t.tries WHEN 1 THEN interval '0.2 seconds' WHEN 2 THEN interval '10 seconds'
                                       WHEN 3 THEN interval '70 seconds' ELSE interval '3 days 1 hour' END) AS last_at
                FROM webhooks_webhookevent e
                CROSS JOIN LATERAL (SELECT CASE WHEN h < 97 THEN 1 WHEN h < 98 THEN 2 WHEN h < 99 THEN 3
                                                ELSE {retries + 1} END AS tries
                                    FROM (SELECT mod(abs(hashtext(e.id)), 100) AS h) AS hh) AS t
                WHERE e.id LIKE 'evt\\_%%' AND (e.subject_id LIKE 'SPH%%' OR e.subject_id LIKE 'rfnd\\_h%%')
                  AND e.created_at >= %(cutoff)s
            ) AS d
            ORDER BY created_at""", {"cutoff": cutoff})
        step("webhook attempts", """
            INSERT INTO webhooks_webhookdeliveryattempt (number, outcome, url, started_at, finished_at, duration_ms,
                http_status, response_snippet, error, signature_header, delivery_id)
            SELECT k, CASE WHEN k = d.attempts AND d.status = 'delivered' THEN 'delivered' ELSE 'failed' END,
                   'https://m.merchant.example/webhooks', at, at + (40 + mod(d.id, 200)) * interval '1 millisecond',
                   40 + mod(d.id, 200),
                   CASE WHEN k = d.attempts AND d.status = 'delivered' THEN 200 ELSE 503 END,
                   CASE WHEN k = d.attempts AND d.status = 'delivered' THEN 'ok' ELSE 'Service Unavailable' END,
                   CASE WHEN k = d.attempts AND d.status = 'delivered' THEN '' ELSE 'HTTP 503' END,
                   't=' || extract(epoch FROM at)::bigint || ',v1=' || md5(d.event_id) || md5(d.event_id || 'x'),
                   d.id
            FROM webhooks_webhookdelivery d
            CROSS JOIN LATERAL generate_series(1, d.attempts) AS k
            CROSS JOIN LATERAL (SELECT CASE WHEN k = d.attempts THEN d.last_attempt_at
                                            ELSE d.created_at + (k - 1) * interval '10 seconds' END AS at) AS a
            WHERE d.id >= %(first)s
            ORDER BY d.id, k""", {"first": first_delivery})

    t0 = time.monotonic()
    with connection.cursor() as cur:
        cur.execute("VACUUM (ANALYZE)" if vacuum else "ANALYZE")
    size.timings["vacuum analyze" if vacuum else "analyze"] = round(time.monotonic() - t0, 1)
    counts = table_counts()
    log(f"filled: {json.dumps(counts)}")
    return {"counts": counts, "timings": size.timings, "start": start.isoformat(), "end": end.isoformat()}


TABLES = ("gateway_merchant", "payments_payment", "payments_paymentevent", "refunds_refund", "refunds_refundevent",
          "webhooks_webhookevent", "webhooks_webhookdelivery", "webhooks_webhookdeliveryattempt")


def table_counts() -> dict:
    from django.db import connection

    with connection.cursor() as cur:
        out = {}
        for table in TABLES:
            cur.execute(f"SELECT count(*) FROM {table}")
            out[table] = cur.fetchone()[0]
        cur.execute("SELECT pg_database_size(current_database())")
        out["database_bytes"] = cur.fetchone()[0]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--payments", type=int, required=True)
    parser.add_argument("--merchants", type=int, default=0)
    parser.add_argument("--months", type=int, default=18)
    parser.add_argument("--merchant-code", help="an existing merchant that takes the largest share")
    args = parser.parse_args()
    import django

    django.setup()
    t0 = time.monotonic()
    result = fill(Size(args.payments, args.merchants, args.months), merchant_code=args.merchant_code)
    result["seconds"] = round(time.monotonic() - t0, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
