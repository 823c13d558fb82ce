"""Razorpay's webhooks: X-Razorpay-Signature is the hex HMAC-SHA256 of the raw body with the
webhook secret, compared in constant time; the event's created_at says how fresh it is; and a
genuine payment.captured, delivered at the inbound door, makes the payment SUCCESS once."""
from __future__ import annotations

import json
import time

import pytest
from django.test import Client

from payments.acquirer.base import NoticeMalformed, NoticeNotFresh, NoticeRejected, Outcome, PaymentNotice, RefundNotice
from payments.acquirer.razorpay.notices import MAX_AGE_SECONDS, notice_parse, notice_verify, webhook_signature
from payments.models import AcquirerNotice, Payment
from tests.acquirer_razorpay.shapes import fixture
from tests.payments.s2s.conftest import post, s2s_merchant  # noqa: F401 - fixtures
from tests.support.factories import signed_body

SECRET = "rzp_webhook_secret_0123"
BODY = b'{"entity":"event","event":"payment.failed","contains":["payment"],"payload":{},"created_at":1700000000}'
# Computed outside Python: printf '%s' "$BODY" | openssl dgst -sha256 -hmac "$SECRET"
SIGNATURE = "1230107151a21d59ef90eac1601acdbbcf001368d6148eae62fa614b64a27212"
DOOR = "/acquirer/razorpay/webhooks"


def test_the_signature_is_the_hex_hmac_sha256_of_the_raw_body():
    assert webhook_signature(secret=SECRET, raw_body=BODY) == SIGNATURE


def test_an_upper_case_signature_is_the_same_signature():
    assert notice_verify(secret=SECRET, headers={"x-razorpay-signature": SIGNATURE.upper()}, raw_body=BODY,
                         now=1700000000)


def headers_for(body: bytes, secret: str = SECRET) -> dict:
    return {"X-Razorpay-Signature": webhook_signature(secret=secret, raw_body=body)}


def test_a_genuine_fresh_delivery_is_taken_with_its_event():
    delivery = notice_verify(secret=SECRET, headers=headers_for(BODY), raw_body=BODY, now=1700000010)
    assert delivery.fresh and delivery.event_type == "payment.failed"


@pytest.mark.parametrize("body", [BODY + b" ", BODY.replace(b"failed", b"captured"),
                                  json.dumps(json.loads(BODY)).encode()])
def test_a_body_other_than_the_signed_bytes_is_refused(body):
    with pytest.raises(NoticeRejected, match="signature"):
        notice_verify(secret=SECRET, headers=headers_for(BODY), raw_body=body, now=1700000010)


def test_another_secret_or_no_signature_is_refused():
    with pytest.raises(NoticeRejected, match="signature"):
        notice_verify(secret=SECRET, headers=headers_for(BODY, "other"), raw_body=BODY, now=1700000010)
    with pytest.raises(NoticeRejected, match="x-razorpay-signature"):
        notice_verify(secret=SECRET, headers={}, raw_body=BODY, now=1700000010)
    with pytest.raises(NoticeRejected, match="no Razorpay webhook secret"):
        notice_verify(secret="", headers=headers_for(BODY), raw_body=BODY, now=1700000010)


def test_an_old_delivery_is_taken_not_fresh_and_one_from_the_future_refused():
    old = notice_verify(secret=SECRET, headers=headers_for(BODY), raw_body=BODY, now=1700000000 + MAX_AGE_SECONDS + 1)
    assert not old.fresh
    with pytest.raises(NoticeNotFresh):
        notice_verify(secret=SECRET, headers=headers_for(BODY), raw_body=BODY, now=1700000000 - 60)


def test_a_signed_body_that_is_not_an_event_is_malformed():
    body = b'{"entity":"payment"}'
    with pytest.raises(NoticeMalformed):
        notice_verify(secret=SECRET, headers=headers_for(body), raw_body=body, now=1700000000)


def test_the_fixtures_webhook_names_no_payment_of_ours_and_is_not_applied():
    """razorpay-python's payment.authorized fixture carries no txn note and no order: nothing to match."""
    assert notice_parse(fixture("fake_payment_authorized_webhook.json")) is None


def test_a_captured_payment_names_our_txn_by_its_note_and_a_refund_by_its_receipt():
    payment = fixture("edit_payment.json") | {"status": "captured", "notes": {"sabpaisa_txn_id": "SPTXN1"},
                                               "acquirer_data": {"rrn": "123412341234"}}
    notice = notice_parse({"event": "payment.captured", "payload": {"payment": {"entity": payment}}})
    assert isinstance(notice, PaymentNotice)
    assert (notice.order_ref, notice.amount, notice.answer.outcome, notice.answer.reference) == (
        "SPTXN1", 1000, Outcome.APPROVED, "123412341234")
    refund = fixture("fake_refund.json") | {"notes": {"sabpaisa_txn_id": "SPTXN1"}, "receipt": "rf_1"}
    notice = notice_parse({"event": "refund.processed", "payload": {"refund": {"entity": refund}}})
    assert isinstance(notice, RefundNotice)
    assert (notice.order_ref, notice.refund_ref, notice.answer.reference) == ("SPTXN1", "rf_1", "10000000000000")


# -- at the inbound door, end to end ------------------------------------------------------------

@pytest.mark.django_db
def test_a_genuine_payment_captured_at_the_door_makes_the_payment_success_once(razorpay_double, post, s2s_merchant):
    response = post(s2s_merchant, signed_body(s2s_merchant, paymentMode="UPI_INTENT"))
    assert response.status_code == 201, response.content
    assert response.json()["intentUrl"].startswith("upi://pay?pa=razorpay.double")
    payment = Payment.objects.get(payment_id=response.json()["paymentId"])
    settled = razorpay_double.settle_payment(payment.sabpaisa_txn_id, "captured", rrn="777766665555", notify=False)
    headers, body = razorpay_double.signed(razorpay_double.payment_webhook(settled, "payment.captured"))
    door = Client()
    meta = {"HTTP_X_RAZORPAY_SIGNATURE": headers["X-Razorpay-Signature"]}
    first = door.post(DOOR, body, content_type="application/json", **meta)
    again = door.post(DOOR, body, content_type="application/json", **meta)
    assert first.status_code == again.status_code == 200, first.content
    assert again.json()["duplicate"] is True
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn) == (Payment.Status.SUCCESS, "777766665555")


@pytest.mark.django_db
def test_a_forged_delivery_at_the_door_is_401_and_records_nothing(razorpay_double):
    body = json.dumps({"entity": "event", "event": "payment.captured", "contains": ["payment"], "payload": {},
                       "created_at": int(time.time())}).encode()
    answer = Client().post(DOOR, body, content_type="application/json", HTTP_X_RAZORPAY_SIGNATURE="00" * 32)
    assert answer.status_code == 401 and answer.json()["errorCode"] == "UNAUTHORIZED"
    assert not AcquirerNotice.objects.exists()
