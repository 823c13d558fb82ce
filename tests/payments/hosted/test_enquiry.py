"""Enquiry, both forms: the interface's Transaction (paise, with paidAmount in rupees), either
flow's payments, and never another merchant's."""
from __future__ import annotations

from datetime import timezone as dt_timezone

import pytest
from django.utils import timezone

from payments.models import Payment
from payments.services.transitions import payment_mark_processing, payment_mark_succeeded
from tests.support.factories import now

pytestmark = pytest.mark.django_db

GET_URL = "/api/v2/payments"
POST_URL = "/api/v2/payments/enquiry"


def make_payment(tm, *, flow=Payment.Flow.HOSTED, status=Payment.Status.PENDING, **fields) -> Payment:
    defaults = dict(merchant=tm.merchant, flow=flow, status=status, amount=199900, merchant_txn_id="ORD-1",
                    customer_name="Asha Rao", customer_email="asha@example.com",
                    expires_at=timezone.now() + timezone.timedelta(minutes=30))
    defaults.update(fields)
    return Payment.objects.create(**defaults)


def paid(payment: Payment, mode="CARD", rrn="123456789012") -> Payment:
    payment_mark_processing(payment_id=payment.pk, payment_mode=mode)
    return payment_mark_succeeded(payment_id=payment.pk, bank_rrn=rrn)


def get(api, tm, **query):
    query.setdefault("merchantId", tm.code)
    return api.get(GET_URL, query, HTTP_X_API_KEY=tm.api_key)


def post(api, tm, body):
    return api.post(POST_URL, body, format="json", HTTP_X_API_KEY=tm.api_key)


def test_get_form_returns_the_transaction_with_paise_amount_and_rupee_paid_amount(api, merchant):
    payment = paid(make_payment(merchant))
    response = get(api, merchant, merchantTxnId="ORD-1")
    assert response.status_code == 200
    payment.refresh_from_db()
    assert response.json() == {
        "sabpaisaTxnId": payment.sabpaisa_txn_id,
        "merchantTxnId": "ORD-1",
        "status": "SUCCESS",
        "amount": 199900,          # paise
        "paidAmount": 1999.0,      # rupees
        "paymentMode": "CARD",
        "customerName": "Asha Rao",
        "customerEmail": "asha@example.com",
        "bankRrn": "123456789012",
        "refundedAmount": 0,       # paise
        "refundPendingAmount": 0,  # paise
        "openDispute": None,  # no dispute of it open (docs/disputes.md)
        # SabPaisa's own enquiry fields beside the interface's (issue 17).
        "success": True,
        "txnId": payment.sabpaisa_txn_id,
        "paymentId": payment.payment_id,
        "merchantId": merchant.code,
        "currency": "INR",
        "customerMobile": None,
        "bankTxnId": "123456789012",
        "initiatedAt": payment.created_at.astimezone(dt_timezone.utc).isoformat(timespec="milliseconds")
                                                                       .replace("+00:00", "Z"),
        "completedAt": payment.completed_at.astimezone(dt_timezone.utc).isoformat(timespec="milliseconds")
                                                                         .replace("+00:00", "Z"),
        "traceId": response["X-Trace-Id"],
    }


def test_enquiry_shows_how_much_has_been_refunded_in_paise(api, merchant):
    from refunds.services import refund_create, refund_mark_processed

    payment = paid(make_payment(merchant))
    first = refund_create(merchant=merchant.merchant, payment=payment, amount=50000, reason="one").refund
    refund_create(merchant=merchant.merchant, payment=payment, amount=20000, reason="two")
    refund_mark_processed(refund_pk=first.pk, bank_reference="RF000000000001")
    data = get(api, merchant, merchantTxnId="ORD-1").json()
    assert (data["refundedAmount"], data["refundPendingAmount"]) == (50000, 20000)


def test_processing_reads_pending_and_nothing_is_paid_yet(api, merchant):
    payment = make_payment(merchant)
    payment_mark_processing(payment_id=payment.pk, payment_mode="UPI")
    data = get(api, merchant, merchantTxnId="ORD-1").json()
    assert (data["status"], data["paidAmount"], data["paymentMode"], data["bankRrn"]) == ("PENDING", 0, "UPI", None)


def test_an_open_session_has_no_payment_mode(api, merchant):
    make_payment(merchant)
    assert get(api, merchant, merchantTxnId="ORD-1").json()["paymentMode"] is None


def test_s2s_payments_are_found_too_and_read_as_upi(api, merchant):
    payment = make_payment(merchant, flow=Payment.Flow.S2S, status=Payment.Status.PROCESSING, s2s_mode="UPI_QR")
    payment_mark_succeeded(payment_id=payment.pk, bank_rrn="998877665544")
    data = get(api, merchant, merchantTxnId="ORD-1").json()
    assert (data["status"], data["paymentMode"], data["bankRrn"]) == ("SUCCESS", "UPI", "998877665544")


def test_another_merchants_payment_is_not_found_as_if_it_did_not_exist(api, merchant, other_merchant):
    make_payment(other_merchant, merchant_txn_id="THEIRS")
    for response in (get(api, merchant, merchantTxnId="THEIRS"),
                     get(api, merchant, merchantTxnId="NOPE"),
                     post(api, merchant, {"clientCode": merchant.code, "merchantTxnId": "THEIRS"})):
        assert response.status_code == 404
        assert response.json()["errorCode"] == "NOT_FOUND"


def test_asking_in_another_merchants_name_is_unauthorized(api, merchant, other_merchant):
    make_payment(other_merchant)
    assert get(api, merchant, merchantId=other_merchant.code, merchantTxnId="ORD-1").status_code == 401
    assert post(api, merchant, {"clientCode": other_merchant.code, "merchantTxnId": "ORD-1"}).status_code == 401
    assert post(api, merchant, {"merchantId": other_merchant.code, "merchantTxnId": "ORD-1"}).status_code == 401


def test_get_form_needs_both_query_parameters(api, merchant):
    response = api.get(GET_URL, {"merchantTxnId": "ORD-1"}, HTTP_X_API_KEY=merchant.api_key)
    assert response.status_code == 400 and response.json()["errorMessage"].startswith("merchantId")
    response = get(api, merchant)
    assert response.status_code == 400 and response.json()["errorMessage"].startswith("merchantTxnId")


def test_enquiry_needs_the_api_key(api, merchant):
    make_payment(merchant)
    assert api.get(GET_URL, {"merchantId": merchant.code, "merchantTxnId": "ORD-1"}).status_code == 401
    assert api.post(POST_URL, {"clientCode": merchant.code, "merchantTxnId": "ORD-1"}, format="json").status_code == 401


def test_post_form_by_client_code_returns_both_forms_fields(api, merchant):
    payment = paid(make_payment(merchant), mode="NB")
    response = post(api, merchant, {"clientCode": merchant.code, "merchantTxnId": "ORD-1"})
    assert response.status_code == 200
    data = response.json()
    assert data["status"] == "SUCCESS"
    assert data["amountPaise"] == 199900 == data["amount"]
    assert data["paidAmount"] == 1999.0
    assert data["paymentMode"] == "NB"
    assert data["bankRrn"] == payment.bank_rrn
    assert data["sabpaisaTxnId"] == payment.sabpaisa_txn_id


def test_post_form_by_merchant_id_with_a_checksum_over_zero_and_inr(api, merchant):
    make_payment(merchant)
    ts = now()
    body = {"merchantId": merchant.code, "merchantTxnId": "ORD-1", "timestamp": ts,
            "checksum": merchant.checksum(merchant.code, "ORD-1", 0, "INR", ts)}
    assert post(api, merchant, body).json()["status"] == "PENDING"


@pytest.mark.parametrize(("change", "code"), [
    ({"checksum": "0" * 64}, "INVALID_SIGNATURE"),
    ({"timestamp": ...}, "INVALID_TIMESTAMP"),
    ({"timestamp": "soon"}, "INVALID_TIMESTAMP"),
    ({"checksum": ...}, "INVALID_SIGNATURE"),
    ({"checksum": "xyz"}, "VALIDATION_ERROR"),
])
def test_post_form_signature_is_verified_when_present(api, merchant, change, code):
    make_payment(merchant)
    ts = now()
    body = {"merchantId": merchant.code, "merchantTxnId": "ORD-1", "timestamp": ts,
            "checksum": merchant.checksum(merchant.code, "ORD-1", 0, "INR", ts)}
    body.update(change)
    body = {k: v for k, v in body.items() if v is not ...}
    response = post(api, merchant, body)
    assert response.status_code == 400 and response.json()["errorCode"] == code


def test_an_old_signed_enquiry_is_request_expired(api, merchant):
    make_payment(merchant)
    ts = now() - 400
    body = {"merchantId": merchant.code, "merchantTxnId": "ORD-1", "timestamp": ts,
            "checksum": merchant.checksum(merchant.code, "ORD-1", 0, "INR", ts)}
    assert post(api, merchant, body).json()["errorCode"] == "REQUEST_EXPIRED"


def test_post_form_needs_a_merchant_code_and_the_two_names_must_agree(api, merchant):
    make_payment(merchant)
    response = post(api, merchant, {"merchantTxnId": "ORD-1"})
    assert response.status_code == 400 and response.json()["errorMessage"].startswith("clientCode")
    response = post(api, merchant, {"clientCode": merchant.code, "merchantId": merchant.code, "merchantTxnId": "ORD-1"})
    assert response.status_code == 200
    response = post(api, merchant, {"clientCode": merchant.code, "merchantTxnId": 7})
    assert response.status_code == 400 and response.json()["errorMessage"].startswith("merchantTxnId")


# --- SabPaisa's enquiry requests (issue 17) ------------------------------------------------------

def test_both_forms_carry_sabpaisas_fields_for_an_open_payment(api, merchant):
    payment = make_payment(merchant, customer_phone="9876543210")
    for response in (get(api, merchant, merchantTxnId="ORD-1"),
                     post(api, merchant, {"clientCode": merchant.code, "merchantTxnId": "ORD-1"})):
        data = response.json()
        assert data["success"] is True and data["txnId"] == payment.sabpaisa_txn_id
        assert (data["customerMobile"], data["completedAt"], data["bankTxnId"]) == ("9876543210", None, None)
        assert data["initiatedAt"].endswith("Z") and data["traceId"] == response["X-Trace-Id"]


def test_sp_txn_id_naming_the_same_payment_is_answered(api, merchant):
    payment = make_payment(merchant)
    body = {"clientCode": merchant.code, "merchantTxnId": "ORD-1", "spTxnId": payment.sabpaisa_txn_id}
    assert post(api, merchant, body).json()["txnId"] == payment.sabpaisa_txn_id
    assert get(api, merchant, merchantTxnId="ORD-1", spTxnId=payment.sabpaisa_txn_id).status_code == 200


def test_sp_txn_id_naming_another_payment_is_not_found_as_if_absent(api, merchant):
    make_payment(merchant)
    other = make_payment(merchant, merchant_txn_id="ORD-2")
    absent = post(api, merchant, {"clientCode": merchant.code, "merchantTxnId": "NOPE"}).json()
    for response in (post(api, merchant, {"clientCode": merchant.code, "merchantTxnId": "ORD-1",
                                          "spTxnId": other.sabpaisa_txn_id}),
                     post(api, merchant, {"clientCode": merchant.code, "merchantTxnId": "ORD-1", "spTxnId": "SPX"}),
                     get(api, merchant, merchantTxnId="ORD-1", spTxnId=other.sabpaisa_txn_id)):
        assert response.status_code == 404
        assert (response.json()["errorCode"], response.json()["errorMessage"]) == ("NOT_FOUND", absent["errorMessage"])


def test_sp_txn_id_must_be_a_string(api, merchant):
    make_payment(merchant)
    response = post(api, merchant, {"clientCode": merchant.code, "merchantTxnId": "ORD-1", "spTxnId": 5})
    assert response.status_code == 400 and response.json()["errorMessage"].startswith("spTxnId")


def test_the_merchant_comes_from_x_merchant_id_when_the_body_names_none(api, merchant, other_merchant):
    make_payment(merchant)
    response = api.post(POST_URL, {"merchantTxnId": "ORD-1"}, format="json", **merchant.headers)
    assert response.status_code == 200 and response.json()["merchantId"] == merchant.code
    # The header must still be the key's merchant.
    response = api.post(POST_URL, {"merchantTxnId": "ORD-1"}, format="json", HTTP_X_API_KEY=merchant.api_key,
                        HTTP_X_MERCHANT_ID=other_merchant.code)
    assert response.status_code == 401


def test_a_checksum_over_the_real_amount_and_currency_is_accepted_too(api, merchant):
    make_payment(merchant)
    ts = now()
    body = {"merchantId": merchant.code, "merchantTxnId": "ORD-1", "timestamp": ts,
            "checksum": merchant.checksum(merchant.code, "ORD-1", 199900, "INR", ts)}
    assert post(api, merchant, body).json()["status"] == "PENDING"


@pytest.mark.parametrize("amount", [199901, 0.5, "199900.00"])
def test_a_checksum_over_another_amount_is_invalid_signature(api, merchant, amount):
    make_payment(merchant)
    ts = now()
    body = {"merchantId": merchant.code, "merchantTxnId": "ORD-1", "timestamp": ts,
            "checksum": merchant.checksum(merchant.code, "ORD-1", amount, "INR", ts)}
    assert post(api, merchant, body).json()["errorCode"] == "INVALID_SIGNATURE"


def test_a_bad_checksum_for_a_missing_payment_is_invalid_signature_not_not_found(api, merchant):
    ts = now()
    body = {"merchantId": merchant.code, "merchantTxnId": "NOPE", "timestamp": ts,
            "checksum": merchant.checksum(merchant.code, "NOPE", 199900, "INR", ts)}
    assert post(api, merchant, body).json()["errorCode"] == "INVALID_SIGNATURE"
