"""Creating S2S UPI payments: the response, what is stored, the UPI link and its QR, duplicates
and the acquirer refusing to start."""
from __future__ import annotations

import re
import shutil
import subprocess
from datetime import timedelta
from decimal import Decimal

import pytest
import qrcode
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from gateway.core.signing import compute_checksum
from payments.models import IdempotencyRecord, MerchantTxnClaim, Payment, PaymentEvent
from payments.services.upi import payee_vpa
from tests.payments.s2s.conftest import assert_error
from tests.support.factories import signed_body


def parse_upi_link(link: str) -> dict[str, str]:
    """An independent reader of upi://pay links (no urllib): split by hand, %XX decoded by hand,
    and a "+" left as it is (UPI links write spaces as %20)."""
    scheme, _, rest = link.partition("://")
    assert scheme == "upi"
    target, _, query = rest.partition("?")
    assert target == "pay"
    params = {}
    for pair in query.split("&"):
        name, _, value = pair.partition("=")
        assert re.fullmatch(r"[A-Za-z0-9%@._~!$'()*,;:/?-]*", value), f"{name} is not percent-encoded: {value!r}"
        raw, i = bytearray(), 0
        while i < len(value):
            if value[i] == "%":
                raw.append(int(value[i + 1:i + 3], 16))
                i += 3
            else:
                raw.extend(value[i].encode())
                i += 1
        assert name not in params
        params[name] = raw.decode("utf-8")
    return params


def test_a_valid_qr_request_creates_a_processing_upi_payment(s2s_merchant, post):
    body = signed_body(s2s_merchant, paymentMode="UPI_QR", udf1="order-42", udf20="z", description="Masala chai x2",
                       metadata={"cart": "c-9", "items": 2})
    response = post(s2s_merchant, body)
    assert response.status_code == 201
    data = response.json()
    payment = Payment.objects.get()
    assert data == {
        "success": True, "paymentId": payment.payment_id, "txnId": payment.sabpaisa_txn_id,
        "merchantTxnId": body["merchantTxnId"], "status": "PROCESSING", "amount": 12345, "currency": "INR",
        "paymentMode": "UPI_QR", "upiQrString": data["upiQrString"], "intentUrl": None,
        "expiresAt": data["expiresAt"], "message": data["message"], "traceId": response["X-Trace-Id"],
    }
    assert data["upiQrString"].startswith("upi://pay?")
    assert (payment.flow, payment.status, payment.payment_mode, payment.s2s_mode) == ("S2S", "PROCESSING", "UPI", "UPI_QR")
    assert payment.udf == {"udf1": "order-42", "udf20": "z"}
    assert payment.metadata == {"cart": "c-9", "items": 2}
    assert (payment.customer_name, payment.customer_email, payment.customer_phone) == (
        "Asha Rao", "asha@example.com", "+91 98765 43210")
    assert payment.description == "Masala chai x2"
    assert parse_datetime(data["expiresAt"]) == payment.expires_at
    events = list(PaymentEvent.objects.filter(payment=payment).values_list("kind", "to_status"))
    assert events == [("status", "PROCESSING"), ("acquirer", "")]


def test_an_intent_request_returns_the_link_as_intent_url(s2s_merchant, post):
    data = post(s2s_merchant, signed_body(s2s_merchant, paymentMode="UPI_INTENT")).json()
    assert data["paymentMode"] == "UPI_INTENT"
    assert data["upiQrString"] is None
    assert data["intentUrl"].startswith("upi://pay?")
    assert Payment.objects.get().s2s_mode == "UPI_INTENT"


def test_the_upi_link_read_by_an_independent_parser_names_payee_amount_and_transaction(s2s_merchant, post):
    body = signed_body(s2s_merchant, amount=100_050, description="Tea & 2 cakes + 100% joy/हाँ")
    data = post(s2s_merchant, body).json()
    params = parse_upi_link(data["upiQrString"])
    assert list(params) == ["pa", "pn", "am", "cu", "tr", "tn"]
    assert params == {
        "pa": payee_vpa(), "pn": "Asha's Tea & Coffee Co.", "am": "1000.50", "cu": "INR",
        "tr": data["txnId"], "tn": "Tea & 2 cakes + 100% joy/हाँ",
    }


def test_the_note_without_a_description_names_the_merchant_txn_id(s2s_merchant, post):
    data = post(s2s_merchant, signed_body(s2s_merchant, amount=100, merchantTxnId="A_1-b")).json()
    params = parse_upi_link(data["upiQrString"])
    assert params["am"] == "1.00"
    assert params["tn"] == "Payment A_1-b"


@pytest.mark.skipif(shutil.which("zbarimg") is None, reason="zbar-tools is not installed")
def test_the_qr_string_rendered_as_a_qr_image_decodes_back_to_the_same_link(s2s_merchant, post, tmp_path):
    data = post(s2s_merchant, signed_body(s2s_merchant, description="Order #7: chai & samosa")).json()
    image = tmp_path / "qr.png"
    qrcode.make(data["upiQrString"]).save(image)
    decoded = subprocess.run(["zbarimg", "--quiet", "--raw", str(image)], capture_output=True, text=True,
                             check=True, timeout=30).stdout.strip()
    assert decoded == data["upiQrString"]
    assert Decimal(parse_upi_link(decoded)["am"]) == Decimal("123.45")


def test_upi_expiry_minutes_defaults_to_five_and_sets_the_deadline(s2s_merchant, post):
    before = timezone.now()
    post(s2s_merchant, signed_body(s2s_merchant))
    post(s2s_merchant, signed_body(s2s_merchant, upiExpiryMinutes=17))
    default, custom = Payment.objects.order_by("pk")
    assert before + timedelta(minutes=5) <= default.expires_at <= timezone.now() + timedelta(minutes=5)
    assert before + timedelta(minutes=17) <= custom.expires_at <= timezone.now() + timedelta(minutes=17)


def test_creation_queues_nothing_and_the_sweep_expires_the_payment_after_its_deadline(
        s2s_merchant, post, django_capture_on_commit_callbacks):
    from payments.tasks import payments_expire_sweep

    with django_capture_on_commit_callbacks() as queued:
        post(s2s_merchant, signed_body(s2s_merchant, upiExpiryMinutes=3))
    assert queued == []  # no message per payment: the beat's sweep is the expiry (payments.services.expiry)
    payment = Payment.objects.get()
    payments_expire_sweep()
    payment.refresh_from_db()
    assert payment.status == "PROCESSING"
    Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert payments_expire_sweep() == 1
    payment.refresh_from_db()
    assert payment.status == "EXPIRED"


def test_a_reused_merchant_txn_id_is_duplicate_transaction(s2s_merchant, post):
    body = signed_body(s2s_merchant)
    assert post(s2s_merchant, body).status_code == 201
    again = signed_body(s2s_merchant, merchantTxnId=body["merchantTxnId"], amount=999)
    assert_error(post(s2s_merchant, again), "DUPLICATE_TRANSACTION")
    assert Payment.objects.count() == 1


def test_a_merchant_txn_id_of_a_hosted_payment_is_duplicate_too(s2s_merchant, post):
    Payment.objects.create(merchant=s2s_merchant.merchant, flow="HOSTED", merchant_txn_id="SHARED-1", amount=500,
                           status="PENDING", expires_at=timezone.now() + timedelta(minutes=30))
    assert_error(post(s2s_merchant, signed_body(s2s_merchant, merchantTxnId="SHARED-1")), "DUPLICATE_TRANSACTION")
    assert not MerchantTxnClaim.objects.exists()  # the claim that found the payment is not left behind


def test_a_replayed_checksum_ends_the_claim_and_keeps_its_ids_for_the_retry(s2s_merchant, post):
    # The acquirer does not answer (the sandbox's SERVICE_UNAVAILABLE amount): the outcome is
    # unknown, so the claim keeps the payment's ids with its lease ended. A replay of the
    # checksum with another body, refused after it took the claim over, must not lose them.
    body = signed_body(s2s_merchant, amount=100002, webhookUrl="http://93.184.215.14/orders/hook")
    assert_error(post(s2s_merchant, body), "SERVICE_UNAVAILABLE")
    kept = MerchantTxnClaim.objects.get()
    assert_error(post(s2s_merchant, {**body, "webhookUrl": "http://93.184.215.15/collect"}), "INVALID_SIGNATURE")
    after = MerchantTxnClaim.objects.get()
    assert (after.pk, after.sabpaisa_txn_id, after.payment_id) == (kept.pk, kept.sabpaisa_txn_id, kept.payment_id)
    assert after.lease_until <= timezone.now()
    created = post(s2s_merchant, signed_body(s2s_merchant, merchantTxnId=body["merchantTxnId"]))
    assert created.status_code == 201 and created.json()["txnId"] == kept.sabpaisa_txn_id


def test_two_merchants_may_use_the_same_merchant_txn_id(s2s_merchant, other_merchant, post):
    assert post(s2s_merchant, signed_body(s2s_merchant, merchantTxnId="SAME")).status_code == 201
    assert post(other_merchant, signed_body(other_merchant, merchantTxnId="SAME")).status_code == 201


@pytest.mark.parametrize(("amount", "code"), [
    (100001, "PAYMENT_FAILED"), (100002, "SERVICE_UNAVAILABLE"), (100003, "PROCESSING_ERROR")])
def test_the_acquirer_refusing_to_start_is_an_error_that_writes_nothing(s2s_merchant, post, amount, code):
    assert_error(post(s2s_merchant, signed_body(s2s_merchant, amount=amount), key=f"k-{amount}"), code)
    assert not Payment.objects.exists()
    assert not PaymentEvent.objects.exists()
    assert not IdempotencyRecord.objects.exists()


def test_a_retry_after_payment_failed_with_the_same_merchant_txn_id_is_decided_afresh(s2s_merchant, post):
    failed = signed_body(s2s_merchant, amount=100001, merchantTxnId="RETRY-1")
    assert_error(post(s2s_merchant, failed, key="first"), "PAYMENT_FAILED")
    # The same request again (same key) is tried again, and fails again: the sandbox amount says so.
    assert_error(post(s2s_merchant, failed, key="first"), "PAYMENT_FAILED")
    # The merchantTxnId was not used up: with a startable amount it goes through.
    response = post(s2s_merchant, signed_body(s2s_merchant, amount=100000, merchantTxnId="RETRY-1"), key="first")
    assert response.status_code == 201
    assert Payment.objects.get().merchant_txn_id == "RETRY-1"


def test_the_checksum_base_is_merchant_txn_amount_currency_timestamp(s2s_merchant, post):
    body = signed_body(s2s_merchant, checksum=...)
    base = f"{body['merchantId']}|{body['merchantTxnId']}|{body['amount']}|INR|{body['timestamp']}"
    import hashlib
    import hmac

    body["checksum"] = hmac.new(s2s_merchant.secret_key.encode(), base.encode(), hashlib.sha256).hexdigest()
    assert body["checksum"] == compute_checksum(s2s_merchant.secret_key, body["merchantId"], body["merchantTxnId"],
                                                body["amount"], "INR", body["timestamp"])
    assert post(s2s_merchant, body).status_code == 201
