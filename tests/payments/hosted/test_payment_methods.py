"""A merchant's payment methods and their amount limits (gateway.platform.methods) on the hosted flow:
creation refuses an amount no offered method takes, the page shows only the methods the
amount fits, and a method the page did not offer cannot be started by a forged form."""
from __future__ import annotations

import pytest

from gateway.platform import methods
from gateway.core.errors import ValidationError
from payments.models import Payment
from payments.services import hosted
from tests.payments.hosted.conftest import URL
from tests.support.factories import session_body

pytestmark = pytest.mark.django_db


def offer_only(tm, *codes: str) -> None:
    tm.merchant.payment_methods = {code: {"enabled": False, "min": methods.RULES[code].default_min,
                                          "max": methods.RULES[code].default_max}
                                   for code in methods.CODES if code not in codes}
    tm.merchant.save()


def open_page(client, session) -> str:
    client.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")
    response = client.get(f"/checkout/{session['paymentId']}")
    assert response.status_code == 200
    return response.content.decode()


def shown(html: str) -> list[str]:
    return [code for code in methods.CODES if f'data-method="{code}"' in html]


def test_rtgs_is_not_offered_on_a_499_rupee_order(client, create_session, shop):
    html = open_page(client, create_session(shop, amount=49_900))
    assert shown(html) == ["UPI", "CARD", "NB", "WALLET", "NEFT", "CHALLAN"]


def test_a_large_order_is_offered_rtgs_and_not_upi_or_cash(client, create_session, shop):
    html = open_page(client, create_session(shop, amount=25_000_000))
    assert shown(html) == ["CARD", "NB", "NEFT", "RTGS"]


def test_a_session_no_offered_method_takes_is_refused_naming_amount(api, shop):
    offer_only(shop, "RTGS")
    body = session_body(shop, amount=49_900)
    response = api.post(URL, body, format="json", HTTP_X_API_KEY=shop.api_key)
    assert response.status_code == 400
    error = response.json()
    assert error["errorCode"] == "VALIDATION_ERROR" and error["errorMessage"].startswith("amount: ")
    assert not Payment.objects.filter(merchant_txn_id=body["merchantTxnId"]).exists()
    # The same merchant's large order goes through.
    assert api.post(URL, session_body(shop, amount=20_000_000), format="json",
                    HTTP_X_API_KEY=shop.api_key).status_code == 200


def test_a_switched_off_method_is_not_shown(client, create_session, shop):
    offer_only(shop, "UPI", "CARD")
    assert shown(open_page(client, create_session(shop, amount=49_900))) == ["UPI", "CARD"]


def test_a_method_not_offered_for_the_amount_cannot_be_started(client, create_session, shop):
    session = create_session(shop, amount=49_900)
    open_page(client, session)
    response = client.post(f"/checkout/{session['paymentId']}/transfer/start", {"mode": "RTGS"})
    assert response.status_code == 400
    assert response.json()["errorMessage"].startswith("paymentMode: RTGS is not offered")
    payment = Payment.objects.get(payment_id=session["paymentId"])
    assert (payment.status, payment.payment_mode, payment.events.count()) == ("PENDING", "", 1)


def test_the_service_refuses_a_method_not_offered_and_leaves_the_payment_open(create_session, shop):
    offer_only(shop, "UPI", "CARD")
    session = create_session(shop, amount=49_900)
    payment = Payment.objects.select_related("merchant").get(payment_id=session["paymentId"])
    with pytest.raises(ValidationError) as caught:
        hosted.hosted_bank_start(payment=payment, mode="NB", bank_code="SBIN")
    assert caught.value.field == "paymentMode"
    payment.refresh_from_db()
    assert payment.status == "PENDING"
