"""gateway.perf.sql: the hand-written statements write and read exactly what the ORM would."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from gateway.perf import sql
from payments.models import IdempotencyRecord, Payment, PaymentEvent
from tests.support.factories import make_merchant

pytestmark = pytest.mark.django_db


def _record(merchant, key: str, **fields) -> IdempotencyRecord:
    return IdempotencyRecord(merchant=merchant, key=key, fingerprint="f" * 64,
                             expires_at=timezone.now() + timedelta(seconds=25), **fields)


def test_insert_unless_taken_inserts_once_and_leaves_the_transaction_usable():
    merchant = make_merchant().merchant
    first = _record(merchant, "k-1")
    with transaction.atomic():
        assert sql.insert_unless_taken(IdempotencyRecord, first)[0] is True
        again = _record(merchant, "k-1")
        assert sql.insert_unless_taken(IdempotencyRecord, again)[0] is False and again.pk is None
        # No IntegrityError was raised, so the transaction goes on.
        assert sql.insert_unless_taken(IdempotencyRecord, _record(merchant, "k-2"))[0] is True
    stored = IdempotencyRecord.objects.get(pk=first.pk)
    assert stored.key == "k-1" and stored.created_at is not None and not first._state.adding
    assert IdempotencyRecord.objects.count() == 2


def test_insert_unless_taken_asking_gives_the_same_answers_on_other_databases(monkeypatch):
    from django.db import connection

    merchant = make_merchant().merchant
    monkeypatch.setattr(connection, "vendor", "other")  # the path SQLite takes, here on PostgreSQL
    taken = sql.Exists(IdempotencyRecord, {"merchant": merchant, "key": "o-1"})
    assert sql.insert_unless_taken(IdempotencyRecord, _record(merchant, "o-1"), taken) == (True, True)
    assert sql.insert_unless_taken(IdempotencyRecord, _record(merchant, "o-1"), taken) == (False, None)
    assert sql.insert_unless_taken(IdempotencyRecord, _record(merchant, "o-2"), None) == (True, None)


def test_insert_unless_taken_asking_answers_the_question_in_the_same_statement():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    merchant = make_merchant().merchant
    taken = sql.Exists(IdempotencyRecord, {"merchant": merchant, "key": "k-1"})
    with CaptureQueriesContext(connection) as queries:
        # Asked as the row goes in: the statement sees the table as it was before its own insert.
        assert sql.insert_unless_taken(IdempotencyRecord, _record(merchant, "k-1"), taken) == (True, False)
    assert len(queries) == 1 and sql.exists(taken) is True
    assert sql.insert_unless_taken(IdempotencyRecord, _record(merchant, "k-2"), taken) == (True, True)
    # Nothing inserted: no row comes back to carry an answer.
    assert sql.insert_unless_taken(IdempotencyRecord, _record(merchant, "k-2"), taken) == (False, None)
    assert sql.insert_unless_taken(IdempotencyRecord, _record(merchant, "k-3"), None) == (True, None)
    assert sql.exists(sql.Exists(IdempotencyRecord, {"merchant": merchant, "key": "k-4"})) is False


def test_insert_rows_sets_the_generated_keys_and_the_orm_reads_back_the_same_values():
    merchant = make_merchant().merchant
    payment = Payment(merchant=merchant, flow=Payment.Flow.S2S, merchant_txn_id="SQL-1", amount=12345,
                      status=Payment.Status.PROCESSING, metadata={"order": "42", "note": "दाल"}, udf={"udf1": "x"},
                      expires_at=timezone.now() + timedelta(minutes=5))
    sql.insert_rows(Payment, [payment])
    events = [PaymentEvent(payment=payment, kind=PaymentEvent.Kind.STATUS, to_status="PROCESSING"),
              PaymentEvent(payment=payment, kind=PaymentEvent.Kind.ACQUIRER, detail={"step": "register"})]
    sql.insert_rows(PaymentEvent, events)
    loaded = Payment.objects.get(pk=payment.pk)
    assert (loaded.payment_id, loaded.sabpaisa_txn_id, loaded.metadata, loaded.udf) == (
        payment.payment_id, payment.sabpaisa_txn_id, {"order": "42", "note": "दाल"}, {"udf1": "x"})
    assert [e.pk for e in events] == list(PaymentEvent.objects.filter(payment=loaded).order_by("pk")
                                          .values_list("pk", flat=True))


def test_insert_with_children_writes_both_in_one_statement_and_a_duplicate_writes_neither():
    from django.db import IntegrityError, connection
    from django.test.utils import CaptureQueriesContext

    merchant = make_merchant().merchant

    def payment():
        return Payment(merchant=merchant, flow=Payment.Flow.HOSTED, merchant_txn_id="SQL-3", amount=700,
                       status=Payment.Status.PENDING, expires_at=timezone.now())

    first = payment()
    events = [PaymentEvent(payment=first, kind=PaymentEvent.Kind.STATUS, to_status="PENDING", detail={"n": 1}),
              PaymentEvent(payment=first, kind=PaymentEvent.Kind.ACQUIRER, detail={"n": 2})]
    with CaptureQueriesContext(connection) as queries:
        sql.insert_with_children(first, events, link="payment")
    assert len(queries) == 1
    stored = list(PaymentEvent.objects.filter(payment_id=first.pk).order_by("pk"))
    assert [(e.pk, e.detail, e.kind) for e in stored] == [(e.pk, e.detail, e.kind) for e in events]
    assert all(e.payment is first for e in events) and Payment.objects.get(pk=first.pk).amount == 700
    second = payment()  # the same merchantTxnId
    with pytest.raises(IntegrityError), transaction.atomic():
        sql.insert_with_children(second, [PaymentEvent(payment=second, kind=PaymentEvent.Kind.STATUS)],
                                 link="payment")
    assert PaymentEvent.objects.count() == 2 and Payment.objects.count() == 1


@pytest.mark.parametrize("claimed", [False, True], ids=["alone", "under a claim"])
def test_insert_with_children_writes_empty_values_without_parameters_and_stores_every_shape_as_given(claimed):
    """sql._constants: a nullable field left None is not in the statement (its column is NULL
    anyway), an empty CharField is the literal ''; the same fields with values are parameters,
    and each shape is stored as given."""
    from django.db import connection

    merchant = make_merchant().merchant
    when = timezone.now().replace(microsecond=0)
    shapes = [(None, None, ""), (700, when, "UTR0001"), (None, when, "")]
    for n, (paid, completed, rrn) in enumerate(shapes):
        record = _record(merchant, f"k-null-{n}")
        record.save()
        parent = Payment(merchant=merchant, flow=Payment.Flow.S2S, merchant_txn_id=f"NULL-{n}", amount=700,
                         status=Payment.Status.PROCESSING, expires_at=when, paid_amount=paid, completed_at=completed,
                         bank_rrn=rrn)
        claim = (sql.Claim(IdempotencyRecord, where={"pk": record.pk}, link="payment", values={"response_status": 201})
                 if claimed else None)
        executed = []

        def capture(execute, statement, params, many, context):
            executed.append((statement, list(params)))
            return execute(statement, params, many, context)

        with connection.execute_wrapper(capture):
            assert sql.insert_with_children(parent, [PaymentEvent(payment=parent, kind=PaymentEvent.Kind.STATUS)],
                                            link="payment", claim=claim)
        (statement, params), = executed
        assert ('"paid_amount"' in statement) == (paid is not None), statement
        assert ('"completed_at"' in statement) == (completed is not None), statement
        assert '"open_dispute"' not in statement  # nullable and None in every shape
        assert '"bank_rrn"' in statement and ("UTR0001" in params) == bool(rrn)
        assert not [p for p in params[:len(params) - 5] if p == ""], params  # the payment's empties are literals
        stored = Payment.objects.get(pk=parent.pk)
        assert (stored.paid_amount, stored.completed_at, stored.open_dispute, stored.amount, stored.bank_rrn) == (
            paid, completed, None, 700, rrn)


@pytest.mark.parametrize("one_statement", [True, False], ids=["postgresql", "other databases"])
def test_insert_with_children_under_a_claim_writes_all_or_nothing(one_statement, monkeypatch):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    merchant = make_merchant().merchant
    record = _record(merchant, "k-claim")
    record.save()
    if not one_statement:  # the path SQLite takes (a transaction), here on PostgreSQL
        monkeypatch.setattr(connection, "vendor", "other")
    lease = {"pk": record.pk, "expires_at": record.expires_at, "response_body": None}
    stored_until = timezone.now() + timedelta(hours=24)

    def attempt(txn_id: str, where: dict):
        parent = Payment(merchant=merchant, flow=Payment.Flow.S2S, merchant_txn_id=txn_id, amount=900,
                         status=Payment.Status.PROCESSING, metadata={"k": "v"}, expires_at=timezone.now())
        children = [PaymentEvent(payment=parent, kind=PaymentEvent.Kind.STATUS, to_status="PROCESSING"),
                    PaymentEvent(payment=parent, kind=PaymentEvent.Kind.ACQUIRER, detail={"n": 2})]
        claim = sql.Claim(IdempotencyRecord, where=where, link="payment",
                          values={"response_status": 200, "response_body": {"paymentId": parent.payment_id},
                                  "expires_at": stored_until})
        with CaptureQueriesContext(connection) as queries:
            inserted = sql.insert_with_children(parent, children, link="payment", claim=claim)
        return inserted, parent, children, queries

    # Another lease's time: the claim misses and nothing is written.
    missed, parent, children, _ = attempt("CLAIM-1", {**lease, "expires_at": record.expires_at + timedelta(1)})
    assert missed is False and parent.pk is None and all(child.pk is None for child in children)
    assert not Payment.objects.exists() and not PaymentEvent.objects.exists()
    record.refresh_from_db()
    assert (record.response_status, record.response_body, record.payment_id) == (None, None, None)

    inserted, parent, children, queries = attempt("CLAIM-2", lease)
    assert inserted is True
    if one_statement:
        assert len(queries) == 1
    record.refresh_from_db()
    assert (record.response_status, record.response_body, record.payment_id, record.expires_at) == (
        200, {"paymentId": parent.payment_id}, parent.pk, stored_until)
    loaded = Payment.objects.get(pk=parent.pk)
    assert (loaded.merchant_txn_id, loaded.amount, loaded.metadata, loaded.payment_id) == (
        "CLAIM-2", 900, {"k": "v"}, parent.payment_id)
    stored = list(PaymentEvent.objects.filter(payment=loaded).order_by("pk"))
    assert [(e.pk, e.kind, e.detail) for e in stored] == [(c.pk, c.kind, c.detail) for c in children]
    assert all(child.payment is parent for child in children) and not parent._state.adding

    # The response is stored now, so the same lease no longer matches: a second write misses.
    again, parent, _, _ = attempt("CLAIM-3", lease)
    assert again is False and Payment.objects.count() == 1 and PaymentEvent.objects.count() == 2


def test_update_where_matches_null_and_equality_and_takes_related_instances():
    merchant = make_merchant().merchant
    record = _record(merchant, "k-3")
    record.save()
    payment = Payment.objects.create(merchant=merchant, flow=Payment.Flow.S2S, merchant_txn_id="SQL-2", amount=500,
                                     status=Payment.Status.PROCESSING, expires_at=timezone.now())
    wrong_lease = {"pk": record.pk, "expires_at": record.expires_at + timedelta(seconds=1), "response_body": None}
    assert sql.update_where(IdempotencyRecord, wrong_lease, {"response_status": 200}) == 0
    lease = {"pk": record.pk, "expires_at": record.expires_at, "response_body": None}
    assert sql.update_where(IdempotencyRecord, lease, {"response_status": 200, "response_body": {"ok": True},
                                                       "payment": payment}) == 1
    record.refresh_from_db()
    assert (record.response_status, record.response_body, record.payment_id) == (200, {"ok": True}, payment.pk)
    # The response is stored now, so "response_body IS NULL" no longer matches.
    assert sql.update_where(IdempotencyRecord, lease, {"response_status": 201}) == 0


def test_insert_values_are_the_orms_values_of_the_same_types():
    from django.db import connection

    merchant = make_merchant().merchant
    payment = Payment(merchant=merchant, flow=Payment.Flow.S2S, merchant_txn_id="SQL-T", amount=12345,
                      status=Payment.Status.PROCESSING, customer_name=None, metadata={"a": 1},
                      expires_at=timezone.now() + timedelta(minutes=5))
    payment.amount = True  # not an int: must take the ORM's path (int(True)), not pass a bool through
    event = PaymentEvent(payment_id=7, kind=PaymentEvent.Kind.STATUS, from_status="", to_status="PENDING",
                         detail={"x": "y"})
    for obj in (payment, event):
        fields = tuple(f for f in type(obj)._meta.concrete_fields if f is not type(obj)._meta.pk)
        fast = sql._insert_values(obj, fields, sql._plain_types(fields, connection.alias), connection)
        orm = [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields]
        # Timestamps set by pre_save (auto_now) differ by the microseconds between the calls.
        stamped = [getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False) for f in fields]
        assert [(type(v), getattr(v, "obj", v)) for v, s in zip(fast, stamped) if not s] == \
               [(type(v), getattr(v, "obj", v)) for v, s in zip(orm, stamped) if not s]
    # And the fast path is taken: most of a payment's columns are plain strings and integers,
    # and its own timestamps (auto_now ones are set by pre_save, so they take the ORM's path).
    payment_fields = tuple(f for f in Payment._meta.concrete_fields if f is not Payment._meta.pk)
    plain = dict(zip([f.name for f in payment_fields], sql._plain_types(payment_fields, connection.alias)))
    assert sum(fast is not None for fast in plain.values()) >= 15
    assert plain["expires_at"] is not None and plain["created_at"] is None and plain["updated_at"] is None


@pytest.mark.django_db(transaction=True)
def test_an_insert_that_need_not_reach_the_disk_commits_asynchronously_by_itself_only():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    merchant = make_merchant().merchant
    with CaptureQueriesContext(connection) as captured:
        assert sql.insert_unless_taken(IdempotencyRecord, _record(merchant, "a-1"), flush_to_disk=False)[0] is True
        assert sql.insert_unless_taken(IdempotencyRecord, _record(merchant, "a-1"), flush_to_disk=False)[0] is False
    assert all("set_config('synchronous_commit', 'off', true)" in q["sql"] for q in captured.captured_queries)
    assert IdempotencyRecord.objects.filter(merchant=merchant, key="a-1").count() == 1
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"  # local to that statement's own transaction

    # Inside a transaction the flag is ignored: it would make the whole commit asynchronous.
    with transaction.atomic(), CaptureQueriesContext(connection) as captured:
        assert sql.insert_unless_taken(IdempotencyRecord, _record(merchant, "a-2"), flush_to_disk=False)[0] is True
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone()[0] == "on"
    assert not any("set_config" in q["sql"] for q in captured.captured_queries)


def test_a_naive_datetime_takes_the_orms_path_and_is_made_aware():
    from datetime import datetime

    from django.db import connection

    field = Payment._meta.get_field("expires_at")
    payment = Payment(merchant_id=1, expires_at=datetime(2026, 1, 1, 12, 0))
    with pytest.warns(RuntimeWarning, match="naive datetime"):
        value, = sql._insert_values(payment, (field,), sql._plain_types((field,), connection.alias), connection)
    assert value == timezone.make_aware(datetime(2026, 1, 1, 12, 0))
