"""Separation of duties (issue 18 item 2): a merchant may require signed refunds, refund status
and enquiry, so that an API key alone (which an administrator can rotate and read) cannot move
money; each refund records the key that made it, and the console's payment page says when that
key had already been rotated away by staff."""
from __future__ import annotations

import time

import pytest
from django.test import Client
from sabpaisa_python import SabPaisa

from gateway.platform import services
from gateway.platform.models import ApiKey
from gateway.core.signing import compute_checksum
from refunds.models import Refund
from tests.support.factories import make_success_payment, refund_body, staff_in


@pytest.fixture
def strict(merchant):
    merchant.merchant.signed_requests_required = True
    merchant.merchant.save(update_fields=["signed_requests_required"])
    return merchant


def error_code(response) -> str:
    return response.json()["errorCode"]


@pytest.mark.django_db
def test_the_setting_is_off_by_default_and_unsigned_refunds_work(post_refund, merchant):
    assert merchant.merchant.signed_requests_required is False
    payment = make_success_payment(merchant)
    assert post_refund(refund_body(merchant, payment, refundAmount=100)).status_code == 200


@pytest.mark.django_db
def test_with_signed_requests_required_an_unsigned_refund_is_refused_and_nothing_is_written(post_refund, strict):
    payment = make_success_payment(strict)
    unsigned = post_refund(refund_body(strict, payment, refundAmount=100))
    assert unsigned.status_code == 400 and error_code(unsigned) == "INVALID_TIMESTAMP"
    no_checksum = post_refund(refund_body(strict, payment, refundAmount=100, timestamp=int(time.time())))
    assert no_checksum.status_code == 400 and error_code(no_checksum) == "INVALID_SIGNATURE"
    assert "checksum" in no_checksum.json()["errorMessage"]
    forged = refund_body(strict, payment, refundAmount=100, sign=True)
    forged["checksum"] = "0" * 64
    assert error_code(post_refund(forged)) == "INVALID_SIGNATURE"
    assert not Refund.objects.exists()
    signed = post_refund(refund_body(strict, payment, refundAmount=100, sign=True))
    assert signed.status_code == 200, signed.json()


@pytest.mark.django_db
def test_with_signed_requests_required_refund_status_and_enquiry_need_a_checksum(api, post_refund, strict):
    payment = make_success_payment(strict)
    refund_id = post_refund(refund_body(strict, payment, refundAmount=100, sign=True)).json()["refundId"]
    headers = {"HTTP_X_API_KEY": strict.api_key}
    ts = int(time.time())
    code = strict.code

    assert error_code(api.get(f"/api/v2/refunds/{refund_id}?merchantId={code}", **headers)) == "INVALID_TIMESTAMP"
    signed = compute_checksum(strict.secret_key, code, refund_id, ts)
    assert api.get(f"/api/v2/refunds/{refund_id}?merchantId={code}&timestamp={ts}&checksum={signed}",
                   **headers).status_code == 200

    txn = payment.sabpaisa_txn_id
    assert error_code(api.get(f"/api/v2/refunds?merchantId={code}&sabpaisaTxnId={txn}", **headers)) == "INVALID_TIMESTAMP"
    signed = compute_checksum(strict.secret_key, code, txn, ts)
    assert api.get(f"/api/v2/refunds?merchantId={code}&sabpaisaTxnId={txn}&timestamp={ts}&checksum={signed}",
                   **headers).status_code == 200

    order = payment.merchant_txn_id
    assert error_code(api.get(f"/api/v2/payments?merchantId={code}&merchantTxnId={order}", **headers)) == "INVALID_TIMESTAMP"
    signed = compute_checksum(strict.secret_key, code, order, 0, "INR", ts)
    assert api.get(f"/api/v2/payments?merchantId={code}&merchantTxnId={order}&timestamp={ts}&checksum={signed}",
                   **headers).status_code == 200
    unsigned_post = api.post("/api/v2/payments/enquiry", {"merchantId": code, "merchantTxnId": order},
                             format="json", **headers)
    assert error_code(unsigned_post) == "INVALID_TIMESTAMP"
    signed_post = api.post("/api/v2/payments/enquiry", {"merchantId": code, "merchantTxnId": order,
                                                        "timestamp": ts, "checksum": signed}, format="json", **headers)
    assert signed_post.status_code == 200


def test_the_official_sdk_works_for_a_merchant_that_requires_signed_requests(live_server, transactional_db, merchant):
    merchant.merchant.signed_requests_required = True
    merchant.merchant.save(update_fields=["signed_requests_required"])
    sdk = SabPaisa(merchant.code, merchant.api_key, merchant.secret_key)
    sdk.base_url = live_server.url
    payment = make_success_payment(merchant, amount=10_000)
    refund = sdk.refund(payment.sabpaisa_txn_id, amount=25, reason="customer request")
    assert refund["success"] is True, refund
    assert sdk.refund_status(refund["refund_id"])["success"] is True
    answer = sdk.enquiry(payment.merchant_txn_id)
    assert answer["success"] is True and answer["status"] == "SUCCESS", answer


@pytest.mark.django_db
def test_the_payment_page_says_when_a_refund_came_from_a_key_staff_had_rotated(post_refund, merchant):
    payment = make_success_payment(merchant)
    administrator = staff_in("administrators", username="adm-rotator")
    old_key = ApiKey.objects.get(merchant=merchant.merchant)
    before_rotation = post_refund(refund_body(merchant, payment, refundAmount=100))
    assert before_rotation.status_code == 200
    services.merchant_rotate_api_key(merchant=merchant.merchant, grace_seconds=720 * 3600, actor=administrator)
    with_old_key = post_refund(refund_body(merchant, payment, refundAmount=200))  # still in its grace period
    assert with_old_key.status_code == 200
    first, second = Refund.objects.order_by("created_at", "id")
    assert first.api_key_id == old_key.pk and second.api_key_id == old_key.pk

    finance = Client()
    finance.force_login(staff_in("finance"))
    html = finance.get(f"/admin/payments/payment/{payment.pk}/change/").content.decode()
    assert html.count('data-testid="rotated-key-refund"') == 1
    assert second.refund_id in html and "adm-rotator" in html and "grace period" in html


@pytest.mark.django_db
def test_the_console_offers_the_setting_on_the_merchant_page(merchant):
    administrators = Client()
    administrators.force_login(staff_in("administrators"))
    html = administrators.get(f"/admin/gateway/merchant/{merchant.merchant.pk}/change/").content.decode()
    assert 'name="signed_requests_required"' in html and "Recommended" in html
