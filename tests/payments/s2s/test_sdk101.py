"""The official SDK sabpaisa-python 1.0.1 (its own environment, .venv-sdk101) against the live
server, with only base_url changed: create_upi_s2s as a merchant calls it, and the errors it
raises for the codes it knows."""
from __future__ import annotations

import pytest

from payments.models import Payment
from tests.support.factories import make_merchant
from tests.support.sdk101 import run_sdk101


@pytest.fixture
def shop(transactional_db):
    return make_merchant(name="Chai Point Stores")


def test_create_upi_s2s_qr_and_intent(live_server, shop):
    answer = run_sdk101("""
        qr = client.payments.create_upi_s2s(merchant_txn_id="SDK101-QR-1", amount=25000,
                                            customer_name="Asha Rao", customer_email="asha@example.com",
                                            customer_phone="9876543210", mode=UpiPaymentMode.QR,
                                            udf={"udf1": "loyalty-9"})
        intent = client.payments.create_upi_s2s(merchant_txn_id="SDK101-IN-1", amount=25000,
                                                customer_name="Asha Rao", customer_email="asha@example.com",
                                                customer_phone="9876543210", mode=UpiPaymentMode.INTENT)
        result = {"qr": qr, "intent": intent}
    """, server=live_server, merchant=shop)

    qr, intent = answer["qr"], answer["intent"]
    assert qr["success"] is True and qr["status"] == "PROCESSING" and qr["paymentMode"] == "UPI_QR"
    assert qr["upiQrString"].startswith("upi://pay?") and qr["intentUrl"] is None
    assert intent["intentUrl"].startswith("upi://pay?") and intent["upiQrString"] is None
    payment = Payment.objects.get(payment_id=qr["paymentId"])
    assert (payment.merchant_txn_id, payment.amount, payment.udf) == ("SDK101-QR-1", 25000, {"udf1": "loyalty-9"})


def test_sdk_raises_its_typed_errors_for_our_codes(live_server, shop):
    no_s2s = make_merchant(s2s=False)
    create = (
        "def create(txn):\n"
        "    return client.payments.create_upi_s2s(merchant_txn_id=txn, amount=25000, customer_name='Asha Rao',\n"
        "                                          customer_email='asha@example.com', customer_phone='9876543210')\n"
    )
    first = run_sdk101(create + "result = create('SDK101-DUP-1')", server=live_server, merchant=shop)
    assert first["success"] is True
    duplicate = run_sdk101(create + "result = create('SDK101-DUP-1')", server=live_server, merchant=shop)
    assert duplicate["raised"] == "DuplicateTransactionError" and duplicate["http_status"] == 400
    assert duplicate["code"] == "DUPLICATE_TRANSACTION" and duplicate["trace_id"]

    not_enabled = run_sdk101(create + "result = create('SDK101-NO-1')", server=live_server, merchant=no_s2s)
    assert not_enabled["raised"] == "S2sNotEnabledError" and not_enabled["http_status"] == 403

    shop.api_key = "gwk_wrong_wrong_wrong_wrong_wrong_wr"
    unauthorized = run_sdk101(create + "result = create('SDK101-KEY-1')", server=live_server, merchant=shop)
    assert unauthorized["raised"] == "AuthenticationError" and unauthorized["code"] == "UNAUTHORIZED"
