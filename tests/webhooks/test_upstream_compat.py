"""Webhooks that a receiver written from the live SabPaisa docs accepts (issue 17): its header
names beside ours, and its payload fields beside the interface's, amounts still in paise."""
import base64
import hashlib
import hmac
import re
from datetime import datetime, timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from payments.models import Payment
from payments.payloads import UDF_KEYS
from payments.services.transitions import payment_mark_failed, payment_mark_processing, payment_mark_succeeded
from refunds.services import refund_create
from refunds.tasks import refund_process
from tests.support.factories import make_success_payment
from webhooks import services
from webhooks.models import WebhookDelivery, WebhookEvent
from webhooks.services import delivery_attempt_run

ISO_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def docs_receiver_verdict(request, secret: str) -> int:
    """What a receiver written from devdocs.sabpaisa.in/webhooks answers: 401 unless
    X-SabPaisa-Signature verifies, 400 without an idempotency_key, else 200."""
    header = request.headers.get("X-SabPaisa-Signature") or ""
    timestamp, _, signature = header.partition(".")
    if not timestamp.isdigit() or timestamp != request.headers.get("X-SabPaisa-Timestamp"):
        return 401
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + request.body, hashlib.sha256).digest()
    if not hmac.compare_digest(base64.b64encode(mac).decode(), signature):
        return 401
    return 200 if request.json().get("idempotency_key") else 400


def paid(merchant, *, flow=Payment.Flow.HOSTED, status=Payment.Status.SUCCESS) -> Payment:
    payment = Payment.objects.create(
        merchant=merchant, flow=flow, merchant_txn_id=f"UP-{flow}-{status}", amount=150_000,
        status=Payment.Status.PENDING, s2s_mode="UPI_QR" if flow == Payment.Flow.S2S else "",
        udf={"udf1": "cart-7", "udf20": "last"}, metadata={"orderRef": "A-1"},
        expires_at=timezone.now() + timedelta(minutes=5))
    payment_mark_processing(payment_id=payment.pk, payment_mode="UPI")
    if status == Payment.Status.FAILED:
        return payment_mark_failed(payment_id=payment.pk, reason="declined (test)")
    return payment_mark_succeeded(payment_id=payment.pk, bank_rrn="432109876543")


def deliver(subject_id: str) -> WebhookDelivery:
    return delivery_attempt_run(WebhookDelivery.objects.get(event__subject_id=subject_id).pk)


@pytest.mark.parametrize("flow", [Payment.Flow.HOSTED, Payment.Flow.S2S])
def test_a_payment_webhook_carries_the_live_headers_and_a_docs_receiver_accepts_it(hooked, receiver, flow):
    payment = paid(hooked.merchant, flow=flow)
    delivery = deliver(payment.sabpaisa_txn_id)

    (request,) = receiver.requests
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    assert request.headers["X-SabPaisa-Signature"] == request.headers["X-Service-Signature"]
    assert request.headers["X-SabPaisa-Timestamp"] == request.headers["X-Service-Signature"].split(".")[0]
    assert request.headers["X-SabPaisa-Event"] == "payment.success"
    assert request.headers["X-SabPaisa-Delivery-Id"] == delivery.event_id
    assert docs_receiver_verdict(request, hooked.webhook_secret) == 200
    assert docs_receiver_verdict(request, "whsec_someone_else") == 401


@pytest.mark.parametrize("flow", [Payment.Flow.HOSTED, Payment.Flow.S2S])
def test_a_payment_payload_has_the_live_fields_with_amounts_in_paise(hooked, flow):
    payment = paid(hooked.merchant, flow=flow)
    payload = WebhookEvent.objects.get(subject_id=payment.sabpaisa_txn_id).payload

    assert payload["idempotency_key"] == f"{payment.sabpaisa_txn_id}_SUCCESS"
    assert (payload["event"], payload["status"]) == ("payment.success", "SUCCESS")
    assert (payload["txn_id"], payload["merchant_txn_id"]) == (payment.sabpaisa_txn_id, payment.merchant_txn_id)
    # Paise, as integers: interface.md wins over the live API's rupee decimals (1500.00).
    assert payload["request_amount"] == 150_000 and payload["paid_amount"] == 150_000
    assert all(isinstance(payload[k], int) for k in ("request_amount", "paid_amount"))
    assert (payload["currency"], payload["payment_mode"]) == ("INR", "UPI")
    assert payload["bank_rrn"] == payload["bank_txn_id"] == "432109876543"
    assert datetime.fromisoformat(payload["completed_at"]) == payment.completed_at
    assert ISO_MS.fullmatch(payload["timestamp"])
    assert payload["udf_data"] == {key: {"udf1": "cart-7", "udf20": "last"}.get(key) for key in UDF_KEYS}
    assert payload["metadata"] == {"orderRef": "A-1"}
    # What was sent before is still sent (the flat udf values, the interface's names).
    assert payload["udf1"] == "cart-7" and payload["amount"] == 150_000


def test_a_failed_payment_names_its_status_in_the_key(hooked):
    payment = paid(hooked.merchant, status=Payment.Status.FAILED)
    payload = WebhookEvent.objects.get(subject_id=payment.sabpaisa_txn_id).payload
    assert payload["idempotency_key"] == f"{payment.sabpaisa_txn_id}_FAILED"
    assert payload["bank_txn_id"] is None and payload["paid_amount"] == 0


@override_settings(WEBHOOK_RETRY_SCHEDULE=[0])
def test_the_idempotency_key_is_the_same_on_every_retry_and_staff_resend(hooked, receiver, admin_user):
    receiver.respond_with(500, 200, 200)
    payment = paid(hooked.merchant)
    delivery = deliver(payment.sabpaisa_txn_id)
    delivery = delivery_attempt_run(delivery.pk)
    services.delivery_resend(delivery=delivery, actor=admin_user)
    delivery_attempt_run(delivery.pk)

    requests = receiver.wait_for(3)
    assert len({r.json()["idempotency_key"] for r in requests}) == 1
    assert len({r.json()["timestamp"] for r in requests}) == 1
    assert len({r.headers["X-SabPaisa-Delivery-Id"] for r in requests}) == 1


def test_a_refund_webhook_has_a_stable_idempotency_key_of_its_own(hooked, receiver):
    payment = make_success_payment(hooked.merchant, amount=10_000)
    refund = refund_create(merchant=hooked.merchant, payment=payment, amount=4_000).refund
    refund_process(refund.pk)
    refund.refresh_from_db()
    event = WebhookEvent.objects.get(subject_id=refund.refund_id)

    assert event.payload["idempotency_key"] == f"{refund.refund_id}_{refund.status}"
    assert ISO_MS.fullmatch(event.payload["timestamp"])
    delivery_attempt_run(event.deliveries.get().pk)
    request = receiver.requests[-1]
    assert request.headers["X-SabPaisa-Event"] == event.event_type
    assert docs_receiver_verdict(request, hooked.webhook_secret) == 200


def test_a_test_event_carries_its_event_id_as_its_key(hooked, admin_user):
    delivery = services.webhook_test_send(merchant=hooked.merchant, actor=admin_user)
    payload = delivery.event.payload
    assert payload["idempotency_key"] == delivery.event_id
    assert ISO_MS.fullmatch(payload["timestamp"])


def test_the_3_0_0_sdk_verify_webhook_expects_another_scheme_and_refuses_our_deliveries(hooked, receiver):
    """Documented as a difference (docs/webhooks.md, docs/upstream-compat.md): 3.0.0 wants the hex
    HMAC of the payload keyed with the secret key, which X-SabPaisa-Signature cannot also be."""
    from sabpaisa_python import SabPaisa

    payment = paid(hooked.merchant)
    deliver(payment.sabpaisa_txn_id)
    (request,) = receiver.requests
    sdk = SabPaisa(hooked.code, hooked.api_key, hooked.secret_key)
    verdict = sdk.verify_webhook(request.body.decode(), request.headers["X-SabPaisa-Signature"])
    assert verdict["signature_valid"] is False
    # What it would accept is a different header value altogether, keyed with the secret key.
    expected = hmac.new(hooked.secret_key.encode(), request.body, hashlib.sha256).hexdigest()
    assert sdk.verify_webhook(request.body.decode(), expected)["signature_valid"] is True
