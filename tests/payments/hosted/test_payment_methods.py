"""A merchant's payment methods and their amount limits (gateway.platform.methods) on the hosted flow:
creation refuses an amount no offered method takes; the page carries every method the merchant
offers (CONTRACT.md's seven `data-method` controls, issue 26), those the amount does not fit
shown as not available with the reason and the method that can; a form forced for one of them
gets the page's own error and changes nothing; a switched-off method is not on the page."""
from __future__ import annotations

import re

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
    return [code for code in methods.CODES if html.count(f'data-method="{code}"') == 1]


def usable(html: str) -> list[str]:
    return re.findall(r'id="method-([A-Z]+)" data-available="true"', html)


def unavailable(html: str, code: str) -> str:
    """The text of the body of `code`'s control when it is shown as not available."""
    body = re.search(rf'<div class="method-body stack" data-unavailable="{code}">(.*?)</div>', html, re.S)
    assert body, f"{code} is not shown as not available"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body.group(1))).strip()


def test_a_499_rupee_order_carries_all_seven_controls_rtgs_not_available_and_neft_named(
        client, create_session, shop):
    html = open_page(client, create_session(shop, amount=49_900))
    assert shown(html) == list(methods.CODES)
    assert usable(html) == ["UPI", "CARD", "NB", "WALLET", "NEFT", "CHALLAN"]
    why = unavailable(html, "RTGS")
    assert "RTGS is for ₹2,00,000.00 and above, and this payment is ₹499.00." in why
    assert "Pay by NEFT instead" in why and 'href="?method=NEFT#method-NEFT"' in html
    # No form, nothing to submit: the body holds the reason and a link.
    rtgs = re.search(r'data-unavailable="RTGS">(.*?)</div>', html, re.S).group(1)
    assert "<form" not in rtgs and "<button" not in rtgs


def test_a_large_order_carries_all_seven_controls_and_says_which_cannot_take_it(client, create_session, shop):
    html = open_page(client, create_session(shop, amount=25_000_000))
    assert shown(html) == list(methods.CODES)
    assert usable(html) == ["CARD", "NB", "NEFT", "RTGS"]
    assert "UPI takes up to ₹1,00,000.00, and this payment is ₹2,50,000.00." in unavailable(html, "UPI")
    assert "Pay by Net banking instead" in unavailable(html, "UPI")
    assert "Wallet takes up to ₹2,00,000.00" in unavailable(html, "WALLET")
    assert "Cash challan takes up to ₹1,99,999.99" in unavailable(html, "CHALLAN")


def test_the_reason_reads_in_hindi(client, create_session, shop):
    html = open_page(client, create_session(shop, amount=49_900, language="hi"))
    assert shown(html) == list(methods.CODES)
    why = unavailable(html, "RTGS")
    assert "इस रकम के लिए उपलब्ध नहीं" in why and "₹2,00,000.00" in why and "NEFT से पे करें" in why
    assert "Not available" not in html


def test_the_link_to_the_method_that_can_opens_it(client, create_session, shop):
    session = create_session(shop, amount=49_900)
    open_page(client, session)
    html = client.get(f"/checkout/{session['paymentId']}?method=NEFT").content.decode()
    assert re.search(r'<details class="method" name="method" id="method-NEFT" data-available="true" open>', html)
    assert client.get(f"/checkout/{session['paymentId']}?method=nonsense").status_code == 200


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


def test_a_switched_off_method_is_absent_while_one_the_amount_does_not_fit_stays(client, create_session, shop):
    offer_only(shop, "UPI", "CARD", "RTGS")
    html = open_page(client, create_session(shop, amount=49_900))
    assert shown(html) == ["UPI", "CARD", "RTGS"] and usable(html) == ["UPI", "CARD"]
    assert "Pay by" not in unavailable(html, "RTGS")  # NEFT is switched off: no method to name


HTML = {"HTTP_ACCEPT": "text/html,application/xhtml+xml"}


@pytest.mark.parametrize(("amount", "path", "fields", "mode"), [
    (49_900, "transfer/start", {"mode": "RTGS"}, "RTGS"),
    (25_000_000, "transfer/start", {"mode": "CHALLAN"}, "CHALLAN"),
    (25_000_000, "upi", {"vpa": "success@sandbox"}, "UPI"),
    (25_000_000, "wallet", {"wallet": "PAYTM"}, "WALLET"),
])
@pytest.mark.parametrize("accept", [{}, HTML], ids=["client", "browser"])
def test_a_forced_submission_gets_the_pages_own_error_and_changes_nothing(
        client, create_session, shop, amount, path, fields, mode, accept):
    session = create_session(shop, amount=amount)
    open_page(client, session)
    response = client.post(f"/checkout/{session['paymentId']}/{path}", fields, **accept)
    assert response.status_code == 400 and response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    errors = re.search(r'<div class="alert" role="alert" id="form-errors">(.*?)</div>', html, re.S).group(1)
    assert "Not available for this amount" in errors and {"RTGS": "RTGS", "CHALLAN": "Cash challan", "UPI": "UPI", "WALLET": "Wallet"}[mode] in errors
    assert shown(html) == list(methods.CODES)  # the methods page itself, all seven controls
    payment = Payment.objects.get(payment_id=session["paymentId"])
    assert (payment.status, payment.payment_mode, payment.payer_vpa, payment.attempt, payment.events.count()) == (
        "PENDING", "", "", 0, 1)


def test_a_forced_submission_of_a_switched_off_method_is_refused_by_the_page(client, create_session, shop):
    offer_only(shop, "UPI", "CARD")
    session = create_session(shop, amount=49_900)
    open_page(client, session)
    response = client.post(f"/checkout/{session['paymentId']}/netbanking", {"bank": "HDFC"})
    assert response.status_code == 400 and "Net banking is not offered for this payment" in response.content.decode()
    assert Payment.objects.get(payment_id=session["paymentId"]).events.count() == 1


def test_the_service_refuses_a_method_not_offered_and_leaves_the_payment_open(create_session, shop):
    offer_only(shop, "UPI", "CARD")
    session = create_session(shop, amount=49_900)
    payment = Payment.objects.select_related("merchant").get(payment_id=session["paymentId"])
    with pytest.raises(ValidationError) as caught:
        hosted.hosted_bank_start(payment=payment, mode="NB", bank_code="SBIN")
    assert caught.value.field == "paymentMode"
    payment.refresh_from_db()
    assert payment.status == "PENDING"
