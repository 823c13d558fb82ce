"""Set-up steps the benchmark tools run inside a stack's own environment and code:

    python -m benchmarks.ops seed-enquiry CODE COUNT     payments to enquire about
    python -m benchmarks.ops drain CODE COUNT TAG         COUNT webhook events in one transaction
    python -m benchmarks.ops expiry CODE COUNT            COUNT sessions already past their expiry

Each prints one JSON line. `drain` and `expiry` print `t0`, the time (Unix seconds) just before
their transaction commits: the moment the work exists for the worker and the sweep.
"""
from __future__ import annotations

import json
import sys
import time

from django.apps import apps


def seed_enquiry(code: str, count: int) -> dict:
    from django.utils import timezone

    Merchant = apps.get_model("gateway", "Merchant")  # by app label: the same in every revision compared
    from payments.models import Payment

    merchant = Merchant.objects.get(code=code)
    now = timezone.now()
    rows = [Payment(merchant=merchant, flow=Payment.Flow.HOSTED, merchant_txn_id=f"ENQ-{i:06d}", amount=49900,
                    status=Payment.Status.SUCCESS, payment_mode=Payment.Mode.UPI, paid_amount=49900,
                    bank_rrn=f"{i:012d}", customer_name="Asha Rao", customer_email="asha@example.com",
                    expires_at=now, completed_at=now) for i in range(count)]
    Payment.objects.bulk_create(rows, batch_size=1000)
    # The planner statistics a live database has (autovacuum would gather them within a
    # minute); without them PostgreSQL may pick another merchant index and filter every row.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {connection.ops.quote_name(Payment._meta.db_table)}")
    return {"merchant_txn_ids": [r.merchant_txn_id for r in rows]}


def drain(code: str, count: int, tag: str) -> dict:
    """Payment events as the gateway records them (event_record, in the caller's transaction);
    the deliveries are queued as the transaction commits."""
    from django.db import transaction

    Merchant = apps.get_model("gateway", "Merchant")  # by app label: the same in every revision compared
    from webhooks.services import event_record

    merchant = Merchant.objects.get(code=code)
    with transaction.atomic():
        for i in range(count):
            txn = f"SPD{tag}{i:07d}"
            event_record(merchant=merchant, event_type="payment.success", subject_id=txn, payload={
                "event": "payment.success", "paymentId": f"pay_{tag}{i}", "txnId": txn, "merchantTxnId": f"D{tag}-{i}",
                "status": "SUCCESS", "amount": 12345, "paidAmount": 12345, "currency": "INR",
                "paymentMode": "UPI_QR", **{f"udf{k}": None for k in range(1, 21)}})
        t0 = time.time()
    return {"t0": t0, "queued_seconds": time.time() - t0}


def expiry(code: str, count: int) -> dict:
    """Hosted sessions whose 30 minutes ran out a minute ago (the API would take minutes to
    open 100,000): one made by the ORM, so that every column has its proper value, and the
    rest copied from it in one statement with their own ids. Their expiry is the beat's sweep's."""
    from datetime import timedelta

    from django.db import connection, transaction
    from django.utils import timezone

    Merchant = apps.get_model("gateway", "Merchant")  # by app label: the same in every revision compared
    from payments.models import Payment

    merchant = Merchant.objects.get(code=code)
    now = timezone.now()
    # Ids of this run's own, so that a database keeps earlier runs' rows (grown.py tags its orders alike).
    tag = f"{int(time.time()) % 10**6:06d}"
    fresh = {"sabpaisa_txn_id": f"'SPX{tag}' || lpad(g::text, 12, '0')", "payment_id": f"'pay_x{tag}' || g",
             "merchant_txn_id": f"'EXP-{tag}-' || g"}
    columns = [f.column for f in Payment._meta.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    with transaction.atomic():
        template = Payment.objects.create(
            merchant=merchant, flow=Payment.Flow.HOSTED, status=Payment.Status.PENDING, merchant_txn_id=f"EXP-{tag}-0",
            sabpaisa_txn_id=f"SPX{tag}" + "0" * 12, amount=49900, return_url="https://shop.example/done",
            customer_name="Asha Rao", customer_email="asha@example.com", client_secret_hash="0" * 64,
            expires_at=now - timedelta(minutes=1))
        with connection.cursor() as cur:
            cur.execute(
                f"INSERT INTO {quote(Payment._meta.db_table)} ({', '.join(quote(c) for c in columns)}) "
                f"SELECT {', '.join(fresh.get(c, quote(c)) for c in columns)} "
                f"FROM {quote(Payment._meta.db_table)}, generate_series(1, %s) AS g WHERE id = %s",
                [count - 1, template.pk])
        t0 = time.time()
    return {"t0": t0, "merchant_pk": merchant.pk}


def main() -> None:
    import django

    django.setup()
    op, *args = sys.argv[1:]
    if op == "seed-enquiry":
        result = seed_enquiry(args[0], int(args[1]))
    elif op == "drain":
        result = drain(args[0], int(args[1]), args[2])
    elif op == "expiry":
        result = expiry(args[0], int(args[1]))
    else:
        raise SystemExit(f"unknown op {op}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
