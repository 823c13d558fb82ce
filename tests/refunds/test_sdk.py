"""The official SDK (sabpaisa-python 3.0.0) refunds and reads refunds against the live server."""
import pytest
from sabpaisa_python import SabPaisa

from refunds.models import Refund
from refunds.tasks import refund_process
from tests.support.factories import make_payment, make_success_payment


@pytest.fixture
def sdk(live_server, merchant):
    client = SabPaisa(merchant.code, merchant.api_key, merchant.secret_key)
    client.base_url = live_server.url
    return client


def test_sdk_partial_refund_and_its_status(sdk, transactional_db, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    response = sdk.refund(payment.sabpaisa_txn_id, amount=25, reason="customer request")
    assert response["success"] is True, response
    assert response["refundId"] == response["refund_id"]  # the SDK's own refundId is the record's
    assert response["refundAmount"] == 2_500 and response["status"] == "INITIATED"

    refund_process(Refund.objects.get(refund_id=response["refund_id"]).pk)
    status = sdk.refund_status(response["refund_id"])
    assert status["success"] is True, status
    assert status["status"] == "SUCCESS"
    assert status["refundAmount"] == 2_500
    assert status["bankRefundReference"].startswith("RF")


def test_sdk_refund_without_amount_refunds_the_remaining_amount(sdk, transactional_db, merchant):
    payment = make_success_payment(merchant, amount=10_000)
    assert sdk.refund(payment.sabpaisa_txn_id, amount=30)["success"] is True
    response = sdk.refund(payment.sabpaisa_txn_id)
    assert response["success"] is True, response
    assert response["refundAmount"] == 7_000


def test_sdk_sees_refusals_as_http_errors(sdk, transactional_db, merchant):
    pending = make_payment(merchant, status="PENDING")
    refused = sdk.refund(pending.sabpaisa_txn_id, amount=10)
    assert refused["success"] is False and refused["http_code"] == 400

    paid = make_success_payment(merchant, amount=1_000)
    too_much = sdk.refund(paid.sabpaisa_txn_id, amount=10.01)
    assert too_much["success"] is False and too_much["http_code"] == 400

    unknown = sdk.refund_status("REF000")
    assert unknown["success"] is False and unknown["http_code"] == 404


def test_sdk_with_a_wrong_secret_key_is_refused(live_server, transactional_db, merchant):
    client = SabPaisa(merchant.code, merchant.api_key, "not-the-secret")
    client.base_url = live_server.url
    payment = make_success_payment(merchant)
    assert client.refund(payment.sabpaisa_txn_id, amount=5)["http_code"] == 400
    assert not Refund.objects.exists()
