"""The official SDK sabpaisa-python 1.0.1 (package sabpaisa_sdk, in .venv-sdk101) refunds,
looks refunds up and lists them against the live server, with only base_url changed, as a
merchant calls it (issue 17). Its Refund model accepts only INITIATED / SUCCESS / FAILED."""
from __future__ import annotations

import pytest

from refunds.models import Refund
from refunds.tasks import refund_process
from tests.support.factories import make_merchant, make_success_payment
from tests.support.sdk101 import run_sdk101


@pytest.fixture
def shop(transactional_db):
    return make_merchant(name="Chai Point Stores")


def test_refunds_create_then_get_and_status_follow_the_bank(live_server, shop):
    payment = make_success_payment(shop, amount=10_000)
    created = run_sdk101("""
        result = client.refunds.create(txn_id=txn, amount=2500, reason="customer returned the item",
                                       idempotency_key="order-77-refund-1")
    """, server=live_server, merchant=shop, txn=payment.sabpaisa_txn_id)
    assert created.get("raised") is None, created
    assert (created["txnId"], created["amount"], created["refundAmount"]) == (payment.sabpaisa_txn_id, 2500, 2500)
    assert (created["status"], created["originalAmount"]) == ("INITIATED", 10_000)
    refund = Refund.objects.get(refund_id=created["refundId"])
    assert (refund.payment_id, refund.amount, refund.reason) == (payment.pk, 2500, "customer returned the item")

    refund_process(refund.pk)  # the worker's job: the sandbox bank returns the money
    looked_up = run_sdk101("""
        got = client.refunds.get(refund_id)
        status = client.refunds.status(refund_id)
        result = {"get": got, "status": status, "is_success": got.status == RefundStatus.SUCCESS}
    """, server=live_server, merchant=shop, refund_id=created["refundId"])
    got = looked_up["get"]
    assert looked_up["is_success"] is True and looked_up["status"] == got
    assert got["bankRefundId"].startswith("RF") and got["refundedAt"] and got["createdAt"]
    assert got["message"] == "refund processed by the bank"


def test_refunds_create_retried_with_its_idempotency_key_makes_one_refund(live_server, shop):
    payment = make_success_payment(shop, amount=10_000)
    answers = run_sdk101("""
        first = client.refunds.create(txn_id=txn, amount=1000, reason="damaged", idempotency_key="rk-1")
        again = client.refunds.create(txn_id=txn, amount=1000, reason="damaged", idempotency_key="rk-1")
        result = [first, again]
    """, server=live_server, merchant=shop, txn=payment.sabpaisa_txn_id)
    assert answers[0]["refundId"] == answers[1]["refundId"]
    assert Refund.objects.filter(payment=payment).count() == 1


def test_a_refund_the_bank_refuses_reads_failed(live_server, shop):
    payment = make_success_payment(shop, amount=200_000)
    created = run_sdk101("result = client.refunds.create(txn_id=txn, amount=100013, reason='test decline')",
                         server=live_server, merchant=shop, txn=payment.sabpaisa_txn_id)
    refund_process(Refund.objects.get(refund_id=created["refundId"]).pk)
    got = run_sdk101("result = client.refunds.get(refund_id)", server=live_server, merchant=shop,
                     refund_id=created["refundId"])
    assert got["status"] == "FAILED" and got["message"]


def test_refunds_list_filters_and_pages(live_server, shop):
    other_shop = make_merchant(name="Someone Else")
    payment, second = make_success_payment(shop, amount=50_000), make_success_payment(shop, amount=50_000)
    make_success_payment(other_shop)
    run_sdk101("""
        for amount in (1000, 1100, 1200):
            client.refunds.create(txn_id=txn, amount=amount, reason="partial return")
        client.refunds.create(txn_id=second_txn, amount=1300, reason="partial return")
    """, server=live_server, merchant=shop, txn=payment.sabpaisa_txn_id, second_txn=second.sabpaisa_txn_id)
    refund_process(Refund.objects.get(payment=payment, amount=1100).pk)

    listed = run_sdk101("""
        today = date.today().isoformat()
        everything = client.refunds.list()
        page = client.refunds.list(page=1, size=2)
        of_txn = client.refunds.list(txn_id=txn)
        succeeded = client.refunds.list(status="SUCCESS")
        initiated = client.refunds.list(status=RefundStatus.INITIATED, from_date="2020-01-01", to_date="2099-12-31")
        none_yet = client.refunds.list(to_date="2020-01-01")
        walked = client.refunds.list_all(page_size=3)
        result = {"everything": everything, "page": page, "of_txn": of_txn, "succeeded": succeeded,
                  "initiated": initiated, "none_yet": none_yet, "walked": [r.refund_amount for r in walked]}
    """, server=live_server, merchant=shop, txn=payment.sabpaisa_txn_id)
    assert listed.get("raised") is None, listed

    everything = listed["everything"]
    assert [r["amount"] for r in everything["items"]] == [1300, 1200, 1100, 1000]  # newest first
    assert (everything["totalElements"], everything["totalPages"], everything["page"]) == (4, 1, 0)
    page = listed["page"]
    assert [r["amount"] for r in page["items"]] == [1100, 1000]
    assert (page["page"], page["size"], page["totalElements"], page["totalPages"]) == (1, 2, 4, 2)
    assert [r["amount"] for r in listed["of_txn"]["items"]] == [1000, 1100, 1200]
    assert [r["amount"] for r in listed["succeeded"]["items"]] == [1100]
    assert [r["amount"] for r in listed["initiated"]["items"]] == [1300, 1200, 1000]
    assert listed["none_yet"]["items"] == [] and listed["none_yet"]["totalElements"] == 0
    assert listed["walked"] == [1300, 1200, 1100, 1000]


def test_sdk_raises_its_typed_errors_for_refund_codes(live_server, shop):
    payment = make_success_payment(shop, amount=10_000)
    errors = run_sdk101("""
        out = {}
        for name, call in {
            "too_much": lambda: client.refunds.create(txn_id=txn, amount=10001, reason="too much"),
            "unknown_txn": lambda: client.refunds.create(txn_id="SPNOSUCHTXN", amount=100, reason="x"),
            "unknown_refund": lambda: client.refunds.get("rfnd_nosuchrefund"),
        }.items():
            try:
                call()
                out[name] = None
            except SabPaisaError as error:
                out[name] = {"raised": type(error).__name__, "code": error.code, "http_status": error.http_status}
        result = out
    """, server=live_server, merchant=shop, txn=payment.sabpaisa_txn_id)
    assert errors["too_much"]["code"] == "REFUND_AMOUNT_EXCEEDED" and errors["too_much"]["http_status"] == 400
    assert errors["unknown_txn"] == {"raised": "NotFoundError", "code": "NOT_FOUND", "http_status": 404}
    assert errors["unknown_refund"]["raised"] == "NotFoundError"
    assert not Refund.objects.exists()
