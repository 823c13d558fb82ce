"""A generated stretch of settled activity, written fast (set-based SQL, generate_series), for
the reconciliation's tests (tests/refunds/test_reconcile_month.py) and its benchmark
(benchmarks/reconcile.py): merchants with a fee table, SUCCESS payments over `days` days (a
few FAILED ones beside them), SUCCESS refunds, a few chargebacks, one settlement per merchant
per day paid the next morning with a line per event (fees at the agreed rate, 18 % GST, rounded
half up), and a bank statement with one credit per settlement.

Each of the reconciliation's faults can be injected a known number of times, on distinct
payments, refunds, lines and settlements, so that every one is found exactly once: what
`month_generate` returns says which and how many. Deterministic for a given seed.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from django.db import connection, transaction

from gateway.platform.models import Merchant
from gateway.platform.services import merchant_create
from payments.models import Payment
from refunds.models import (
    BankStatement,
    BankStatementLine,
    MerchantFeeRate,
    Refund,
    Settlement,
    SettlementLine,
)

START = datetime(2026, 10, 1, tzinfo=timezone.utc)
MODES = ("UPI", "CARD", "NB", "WALLET")
# (method, basis points, fixed paise): the agreed rates of every generated merchant.
RATES = (("UPI", 0, 0), ("CARD", 190, 0), ("NB", 175, 500), ("", 200, 0))

FAULT_KINDS = ("not_settled", "settled_twice", "amount_mismatch", "fee_mismatch", "tax_not_gst",
               "refund_mismatch", "unknown_reference", "bank_unmatched", "unbalanced")

T = {"payment": Payment._meta.db_table, "refund": Refund._meta.db_table,
     "settlement": Settlement._meta.db_table, "line": SettlementLine._meta.db_table,
     "bank": BankStatementLine._meta.db_table}


@dataclass
class Month:
    start: datetime
    end: datetime            # the day after the last settlement was paid
    payments: int = 0
    refunds: int = 0
    chargebacks: int = 0
    lines: int = 0
    settlements: int = 0
    injected: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)  # each phase of the generation


def _constants(model, varying: set[str]) -> tuple[list[str], list]:
    """Every concrete column of `model` not in `varying`, with its default as the database
    takes it (a JSON default as JSON, ...)."""
    columns, values = [], []
    for f in model._meta.concrete_fields:
        if f.primary_key or f.attname in varying:
            continue
        default = f.get_default()
        columns.append(f.column)
        values.append(f.get_db_prep_save(default, connection))
    return columns, values


def _insert_from(model, varying: dict[str, str], source: str, params: list) -> int:
    """INSERT INTO model's table (constant columns + varying) SELECT ... FROM source."""
    columns, constants = _constants(model, set(varying))
    names = columns + list(varying)
    exprs = ["%s"] * len(columns) + list(varying.values())
    sql = f"INSERT INTO {model._meta.db_table} ({', '.join(names)}) SELECT {', '.join(exprs)} FROM {source}"
    with connection.cursor() as cursor:
        cursor.execute(sql, constants + params)
        return cursor.rowcount


def month_generate(*, payments: int = 10_000, merchants: int = 2, days: int = 30, refund_every: int = 10,
                   chargebacks: int = 5, faults: dict[str, int] | None = None, seed: int = 1,
                   start: datetime = START, prefix: str = "GM") -> Month:
    """Write the activity and return what was written and which faults were injected."""
    faults = {kind: count for kind, count in (faults or {}).items() if count}
    unknown = set(faults) - set(FAULT_KINDS)
    if unknown:
        raise ValueError(f"no such fault: {sorted(unknown)}")
    rng = random.Random(seed)
    month = Month(start=start, end=start + timedelta(days=days + 1))
    merchant_ids = []
    for n in range(merchants):
        code = f"{prefix}{seed % 1000:03d}{n:04d}"
        merchant_create(code=code, name=f"Generated merchant {n}")
        merchant_ids.append(Merchant.objects.get(code=code).pk)
    MerchantFeeRate.objects.bulk_create([MerchantFeeRate(merchant_id=m, method=method, percent_bp=bp, fixed=fixed)
                                         for m in merchant_ids for method, bp, fixed in RATES])
    with transaction.atomic():
        for phase, run in (("payments", lambda: _payments(month, payments, merchant_ids, days, prefix, seed)),
                           ("refunds", lambda: _refunds(month, refund_every)),
                           ("settlements", lambda: _settlements(month, merchant_ids, days, prefix)),
                           ("lines", lambda: _lines(month, chargebacks, rng, prefix)),
                           ("faults", lambda: _inject(month, faults, rng)),
                           ("totals and bank", lambda: _totals_and_bank(month, faults, rng, prefix))):
            began = time.perf_counter()
            run()
            with connection.cursor() as cursor:  # fresh statistics for the next phase's joins
                for table in T.values():
                    cursor.execute(f"ANALYZE {table}")
            month.seconds[phase] = round(time.perf_counter() - began, 2)
    return month


def _payments(month: Month, count: int, merchant_ids: list[int], days: int, prefix: str, seed: int) -> None:
    # Payment i: merchant i % M, day (i // M) % days, an amount with odd paise (so that rates
    # round both ways), a method in turn; every 47th FAILED (a prime: with a merchant count not a multiple of it, no settlement is left empty).
    mcount = len(merchant_ids)
    varying = {
        "merchant_id": "(%s::bigint[])[1 + (i %% %s)]",
        "flow": "'HOSTED'",
        "sabpaisa_txn_id": "%s || lpad(i::text, 12, '0')",
        "payment_id": "%s || 'p' || lpad(i::text, 12, '0')",
        "merchant_txn_id": "'ORD' || i",
        "amount": "100 + (i * 7919 + %s) %% 2500000",
        "status": "CASE WHEN i %% 47 = 46 THEN 'FAILED' ELSE 'SUCCESS' END",
        "payment_mode": "(ARRAY['UPI','CARD','NB','WALLET'])[1 + (i / 3) %% 4]",
        "bank_rrn": "'RRN' || i",
        "expires_at": "%s::timestamptz + ((i / %s) %% %s) * interval '1 day' + (i %% 80000) * interval '1 second'",
        "created_at": "%s::timestamptz + ((i / %s) %% %s) * interval '1 day' + (i %% 80000) * interval '1 second'",
        "updated_at": "%s::timestamptz + ((i / %s) %% %s) * interval '1 day' + (i %% 80000) * interval '1 second'",
        "completed_at": "%s::timestamptz + ((i / %s) %% %s) * interval '1 day' + (i %% 80000) * interval '1 second'"
                        " + interval '60 seconds'",
    }
    params = [merchant_ids, mcount, f"{prefix}{seed % 100:02d}", f"{prefix}{seed % 100:02d}", seed]
    params += [month.start, mcount, days] * 4
    month.payments = _insert_from(Payment, varying, "generate_series(0::bigint, %s::bigint) AS i", params + [count - 1])


def _refunds(month: Month, refund_every: int) -> None:
    # Every `refund_every`-th SUCCESS payment refunded in part, ten minutes on (the same day's payout); payment totals follow.
    varying = {
        "merchant_id": "p.merchant_id", "payment_id": "p.id", "refund_id": "'rf_' || p.sabpaisa_txn_id",
        "amount": "greatest(p.amount / 3, 1)", "status": "'SUCCESS'", "payment_mode": "p.payment_mode",
        "bank_refund_reference": "'BRR' || p.id", "created_at": "p.completed_at + interval '10 minutes'",
        "updated_at": "p.completed_at + interval '10 minutes'",
        "processed_at": "p.completed_at + interval '10 minutes'",
    }
    month.refunds = _insert_from(
        Refund, varying, f"{T['payment']} p WHERE p.status = 'SUCCESS' AND p.id %% %s = 0 "
                         "AND p.completed_at >= %s", [refund_every, month.start])
    with connection.cursor() as cursor:
        cursor.execute(f"""UPDATE {T['payment']} p SET refunded_amount = r.amount
                           FROM {T['refund']} r WHERE r.payment_id = p.id AND r.status = 'SUCCESS'
                           AND p.completed_at >= %s""", [month.start])


def _settlements(month: Month, merchant_ids: list[int], days: int, prefix: str) -> None:
    # One per merchant per day, paid the next morning (04:30 UTC, 10:00 in India).
    varying = {
        "acquirer": "'sandbox'", "merchant_id": "m", "processor_settlement_id": f"'{prefix}S' || m || '_' || d",
        "public_id": f"'stl_' || substr(md5('{prefix}S' || m || '_' || d), 1, 20)",
        "utr": f"'{prefix}UTR' || m || 'D' || d",
        "period_start": "%s::timestamptz + d * interval '1 day'",
        "period_end": "%s::timestamptz + (d + 1) * interval '1 day'",
        "settled_at": "%s::timestamptz + (d + 1) * interval '1 day' + interval '4 hours 30 minutes'",
        "status": "'SETTLED'", "created_at": "now()",
    }
    month.settlements = _insert_from(
        Settlement, varying, "unnest(%s::bigint[]) AS m CROSS JOIN generate_series(0, %s) AS d",
        [month.start] * 3 + [merchant_ids, days - 1])


def _lines(month: Month, chargebacks: int, rng: random.Random, prefix: str) -> None:
    line = T["line"]
    with connection.cursor() as cursor:
        cursor.execute(f"""
            INSERT INTO {line} (settlement_id, kind, processor_event_id, amount, fee, tax, payment_id, refund_id,
                                processor_order_id, processor_payment_id, processor_refund_id, event_type)
            SELECT s.id, 'payment', 'pay_' || p.id, p.amount, 0, 0, p.id, NULL, p.sabpaisa_txn_id, '', '', 'PAYMENT'
            FROM {T['payment']} p JOIN {T['settlement']} s ON s.merchant_id = p.merchant_id
             AND s.period_start = date_trunc('day', p.completed_at, 'UTC') AND s.acquirer = 'sandbox'
            WHERE p.status = 'SUCCESS' AND p.completed_at >= %s""", [month.start])
        month.lines = cursor.rowcount
        cursor.execute(f"""
            INSERT INTO {line} (settlement_id, kind, processor_event_id, amount, fee, tax, payment_id, refund_id,
                                processor_order_id, processor_payment_id, processor_refund_id, event_type)
            SELECT s.id, 'refund', 'rf_' || r.id, r.amount, 0, 0, p.id, r.id, p.sabpaisa_txn_id, '', r.refund_id,
                   'REFUND'
            FROM {T['refund']} r JOIN {T['payment']} p ON p.id = r.payment_id
            JOIN {T['settlement']} s ON s.merchant_id = p.merchant_id
             AND s.period_start = date_trunc('day', r.processed_at, 'UTC') AND s.acquirer = 'sandbox'
            WHERE r.status = 'SUCCESS' AND p.completed_at >= %s""", [month.start])
        month.lines += cursor.rowcount
        # A few chargebacks: half of a payment taken back in its own settlement.
        cursor.execute(f"""SELECT l.settlement_id, l.payment_id, l.amount, l.processor_order_id FROM {line} l
                           JOIN {T['settlement']} s ON s.id = l.settlement_id
                           WHERE l.kind = 'payment' AND s.period_start >= %s ORDER BY l.id""", [month.start])
        rows = cursor.fetchall()
        picks = rng.sample(rows, min(chargebacks, len(rows)))
        for n, (settlement_id, payment_id, amount, order) in enumerate(picks):
            cursor.execute(f"""INSERT INTO {line} (settlement_id, kind, processor_event_id, amount, fee, tax,
                               payment_id, processor_order_id, processor_payment_id, processor_refund_id, event_type)
                               VALUES (%s, 'chargeback', %s, %s, 0, 0, %s, %s, '', '', 'CHARGEBACK')""",
                           [settlement_id, f"cb_{prefix}_{n}", max(amount // 2, 1), payment_id, order])
        month.chargebacks = len(picks)
        month.lines += len(picks)


def _pick(cursor, sql: str, params: list, count: int, rng: random.Random, taken: set) -> list[int]:
    cursor.execute(sql, params)
    ids = [row[0] for row in cursor.fetchall() if row[0] not in taken]
    picked = rng.sample(ids, count)
    taken.update(picked)
    return picked


def _inject(month: Month, faults: dict[str, int], rng: random.Random) -> None:
    """Faults on the lines, before their fees are written (a fee follows the line's amount)."""
    line, payment = T["line"], T["payment"]
    payment_lines = f"SELECT l.payment_id FROM {line} l WHERE l.kind = 'payment' AND l.payment_id IS NOT NULL " \
                    f"AND NOT EXISTS (SELECT 1 FROM {line} c WHERE c.payment_id = l.payment_id AND c.kind <> 'payment')"
    taken: set[int] = set()
    with connection.cursor() as cursor:
        def payments_for(kind):
            return _pick(cursor, payment_lines, [], faults.get(kind, 0), rng, taken)

        if faults.get("not_settled"):
            cursor.execute(f"DELETE FROM {line} WHERE kind = 'payment' AND payment_id = ANY(%s)",
                           [payments_for("not_settled")])
        if faults.get("settled_twice"):
            cursor.execute(f"""INSERT INTO {line} (settlement_id, kind, processor_event_id, amount, fee, tax,
                               payment_id, processor_order_id, processor_payment_id, processor_refund_id, event_type)
                               SELECT settlement_id, kind, processor_event_id || '_again', amount, fee, tax,
                               payment_id, processor_order_id, '', '', event_type FROM {line}
                               WHERE kind = 'payment' AND payment_id = ANY(%s)""", [payments_for("settled_twice")])
        if faults.get("amount_mismatch"):
            cursor.execute(f"UPDATE {line} SET amount = amount + 100 WHERE kind = 'payment' AND payment_id = ANY(%s)",
                           [payments_for("amount_mismatch")])
        # Fees at the agreed rate on each line's amount, GST on them, for payment lines.
        cursor.execute(f"""
            UPDATE {line} l SET fee = (l.amount * r.percent_bp + 5000) / 10000 + r.fixed
            FROM {payment} p, refunds_merchantfeerate r
            WHERE l.kind = 'payment' AND p.id = l.payment_id AND r.merchant_id = p.merchant_id
              AND r.method = CASE WHEN p.payment_mode IN ('UPI', 'CARD', 'NB') THEN p.payment_mode ELSE '' END""")
        if faults.get("fee_mismatch"):
            cursor.execute(f"UPDATE {line} SET fee = fee + 100 WHERE kind = 'payment' AND payment_id = ANY(%s)",
                           [payments_for("fee_mismatch")])
        cursor.execute(f"UPDATE {line} SET tax = (fee * 18 + 50) / 100")
        if faults.get("tax_not_gst"):
            cursor.execute(f"UPDATE {line} SET tax = tax + 1 WHERE kind = 'payment' AND payment_id = ANY(%s)",
                           [payments_for("tax_not_gst")])
        if faults.get("unknown_reference"):
            picked = payments_for("unknown_reference")
            cursor.execute(f"""INSERT INTO {line} (settlement_id, kind, processor_event_id, amount, fee, tax,
                               payment_id, processor_order_id, processor_payment_id, processor_refund_id, event_type)
                               SELECT settlement_id, 'payment', 'stranger_' || id, 1000, 20, 4, NULL,
                               'NOT_OURS_' || id, '', '', 'PAYMENT' FROM {line}
                               WHERE kind = 'payment' AND payment_id = ANY(%s)""", [picked])
        count = faults.get("refund_mismatch", 0)
        if count:
            refunds = _pick(cursor, f"SELECT refund_id FROM {line} WHERE kind = 'refund' AND refund_id IS NOT NULL",
                            [], count, rng, set())
            dropped, doubled = refunds[: count // 2], refunds[count // 2:]
            cursor.execute(f"DELETE FROM {line} WHERE kind = 'refund' AND refund_id = ANY(%s)", [dropped])
            cursor.execute(f"""INSERT INTO {line} (settlement_id, kind, processor_event_id, amount, fee, tax,
                               payment_id, refund_id, processor_order_id, processor_payment_id, processor_refund_id,
                               event_type)
                               SELECT settlement_id, kind, processor_event_id || '_again', amount, fee, tax,
                               payment_id, refund_id, processor_order_id, '', processor_refund_id, event_type
                               FROM {line} WHERE kind = 'refund' AND refund_id = ANY(%s)""", [doubled])
    month.injected = dict(faults)


def _totals_and_bank(month: Month, faults: dict[str, int], rng: random.Random, prefix: str) -> None:
    settlement, line, bank = T["settlement"], T["line"], T["bank"]
    with connection.cursor() as cursor:
        cursor.execute(f"""
            UPDATE {settlement} s SET gross = t.gross, fees = t.fees, tax = t.tax, refunds = t.refunds,
                   chargebacks = t.chargebacks, adjustments = 0,
                   net = t.gross - t.fees - t.tax - t.refunds - t.chargebacks
            FROM (SELECT settlement_id,
                         coalesce(sum(amount) FILTER (WHERE kind = 'payment'), 0) AS gross,
                         sum(fee) AS fees, sum(tax) AS tax,
                         coalesce(sum(amount) FILTER (WHERE kind = 'refund'), 0) AS refunds,
                         coalesce(sum(amount) FILTER (WHERE kind = 'chargeback'), 0) AS chargebacks
                  FROM {line} GROUP BY settlement_id) t
            WHERE t.settlement_id = s.id AND s.period_start >= %s""", [month.start])
        ids_sql = f"SELECT id FROM {settlement} WHERE period_start >= %s ORDER BY id"
        taken: set[int] = set()
        unbalanced = _pick(cursor, ids_sql, [month.start], faults.get("unbalanced", 0), rng, taken)
        cursor.execute(f"UPDATE {settlement} SET net = net + 1 WHERE id = ANY(%s)", [unbalanced])
        unmatched = _pick(cursor, ids_sql, [month.start], faults.get("bank_unmatched", 0), rng, taken)
        statement = BankStatement.objects.create(name=f"{prefix} generated statement", sha256=f"{prefix}{rng.random()}",
                                                 source=BankStatement.Source.FOLDER)
        # One credit per settlement, on its payment date in India; an unmatched one is short
        # by a rupee or carries another UTR, in turn.
        cursor.execute(f"""
            INSERT INTO {bank} (statement_id, line_no, date, amount, utr, narration)
            SELECT %s, row_number() OVER (ORDER BY s.id), (s.settled_at AT TIME ZONE 'Asia/Kolkata')::date,
                   CASE WHEN s.id = ANY(%s) AND s.id %% 2 = 0 THEN s.net - 100 ELSE s.net END,
                   CASE WHEN s.id = ANY(%s) AND s.id %% 2 = 1 THEN 'X' || s.utr ELSE s.utr END,
                   'NEFT CR ' || s.utr
            FROM {settlement} s WHERE s.period_start >= %s""", [statement.pk, unmatched, unmatched, month.start])
