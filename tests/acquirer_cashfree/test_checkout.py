"""The hosted checkout with Cashfree as its acquirer (GATEWAY_ACQUIRER=cashfree): the customer is
sent to the issuer's 3-D Secure page, the bank's or the wallet's, and comes back to the
checkout's return view, where Cashfree's status query, never the redirect's parameters, decides.
Cashfree is Prism serving its own description (every request checked), with answers scripted
where Prism's example does not fit (ScriptedPrism, tests/acquirer_cashfree/test_acquirer.py)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from payments.acquirer.cashfree.acquirer import CashfreeAcquirer
from payments.models import Payment, PaymentEvent
from payments.services.cutoff import hosted_unanswered_reconcile
from payments.services.hosted.pages import ACQUIRER_PAGE_PATIENCE
from payments.tasks import payments_expire_sweep
from tests.payments.hosted.conftest import create_session  # noqa: F401 - a fixture
from tests.payments.hosted.doubles import use_acquirer
from tests.payments.s2s.conftest import s2s_merchant  # noqa: F401 - a fixture

from .test_acquirer import PRISM_ORDER_AMOUNT, TRANSFER_ANSWER, cashfree, payments_list, sent  # noqa: F401

pytestmark = pytest.mark.django_db

PUBLIC = "https://pay.example.com"
CARD_FORM = {"card_number": "4111 1111 1111 1111", "card_expiry": "07/31", "card_cvv": "739"}
# The cf_payment_id of Prism's example order pay answer: the card's challenge reference.
CHALLENGE = "91235"
S = Payment.Status


@pytest.fixture
def on_cashfree(settings, monkeypatch, cashfree):
    """The gateway configured for Cashfree, its client talking to Prism (scriptable)."""
    settings.GATEWAY_ACQUIRER = "cashfree"
    settings.GATEWAY_PUBLIC_URL = PUBLIC
    adapter = CashfreeAcquirer(cashfree)  # its return address from the settings
    use_acquirer(monkeypatch, adapter)
    return adapter


@pytest.fixture
def customer(create_session, s2s_merchant):
    """A browser on the checkout of a fresh ₹22 session (Prism's example order is ₹22)."""
    session = create_session(s2s_merchant, amount=PRISM_ORDER_AMOUNT)
    browser = Client()
    browser.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")
    browser.payment = Payment.objects.get(payment_id=session["paymentId"])
    return browser


def page(payment: Payment, tail: str = "") -> str:
    return f"/checkout/{payment.payment_id}{tail}"


def cashfree_says(cashfree, payment: Payment, *entries) -> None:
    """Script Cashfree's status query (get payments for the order) of `payment`."""
    cashfree.script[("GET", f"/orders/{payment.sabpaisa_txn_id}/payments")] = (200, payments_list(*entries))


def card_to_issuer(customer) -> str:
    response = customer.post(page(customer.payment, "/card"), CARD_FORM)
    assert response.status_code == 303
    return response["Location"]


# -- cards: 3-D Secure on the issuer's page -------------------------------------------------------

def test_a_card_sends_the_customer_to_the_issuers_page_and_cashfree_back_to_our_return_view(
        on_cashfree, cashfree, customer):
    payment = customer.payment
    location = card_to_issuer(customer)
    assert location.startswith("https://sandbox.cashfree.com/pg/view/gateway/")  # not our OTP form
    order = sent(cashfree, "POST", "/orders")[0]
    assert order.body["order_meta"]["return_url"] == f"{PUBLIC}/checkout/{payment.payment_id}/back"
    payment.refresh_from_db()
    assert (payment.status, payment.card_challenge_ref) == (S.PROCESSING, CHALLENGE)
    # Nothing of ours asks for an OTP meanwhile: the customer waits (the page polls).
    for tail in ("/card/challenge", ""):
        assert customer.get(page(payment, tail))["Location"] == page(payment, "/status")
    waiting = customer.get(page(payment, "/status"))
    assert waiting.status_code == 200 and b"data-poll" in waiting.content and b'name="otp"' not in waiting.content


def test_the_return_view_asks_cashfrees_status_and_records_the_success(on_cashfree, cashfree, customer):
    payment = customer.payment
    card_to_issuer(customer)
    cashfree_says(cashfree, payment, (CHALLENGE, "SUCCESS", "credit_card", "BANKREF1"))
    back = customer.get(page(payment, "/back"), {"order_id": payment.sabpaisa_txn_id})
    assert back.status_code == 303 and back["Location"] == page(payment, "/result")
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn, payment.paid_amount) == (S.SUCCESS, "BANKREF1", PRISM_ORDER_AMOUNT)
    assert sent(cashfree, "GET", f"/orders/{payment.sabpaisa_txn_id}/payments")
    assert payment.acquirer_call_started_at is None
    assert b'data-payment-status="SUCCESS"' in customer.get(back["Location"]).content


def test_the_return_view_records_cashfrees_decline_as_a_failed_attempt(on_cashfree, cashfree, customer):
    payment = customer.payment
    card_to_issuer(customer)
    cashfree_says(cashfree, payment, (CHALLENGE, "FAILED", "credit_card", ""))
    back = customer.get(page(payment, "/back"))
    payment.refresh_from_db()
    assert (payment.status, payment.failed_attempts) == (S.PENDING, 1)  # the methods again, with the reason
    assert back["Location"] == page(payment)
    assert payment.attempt_error == "failed at the bank" and not payment.bank_rrn
    assert b'data-attempt="failed"' in customer.get(back["Location"]).content


def test_a_forged_return_saying_success_is_recorded_as_cashfree_says_failed(on_cashfree, cashfree, customer):
    payment = customer.payment
    Payment.objects.filter(pk=payment.pk).update(failed_attempts=Payment.MAX_FAILED_ATTEMPTS - 1)
    card_to_issuer(customer)
    cashfree_says(cashfree, payment, (CHALLENGE, "FAILED", "credit_card", ""))
    forged = {"order_id": payment.sabpaisa_txn_id, "order_status": "PAID", "payment_status": "SUCCESS",
              "txStatus": "SUCCESS", "status": "SUCCESS", "referenceId": "BANKREF1"}
    back = customer.get(page(payment, "/back"), forged)
    payment.refresh_from_db()
    assert payment.status == S.FAILED and not payment.bank_rrn
    assert back["Location"] == page(payment, "/result")
    assert b'data-payment-status="FAILED"' in customer.get(back["Location"]).content
    answer = payment.events.get(kind=PaymentEvent.Kind.ACQUIRER, detail__step="card_verify_otp_return")
    assert (answer.detail["outcome"], answer.detail["cf_payment_id"]) == ("declined", CHALLENGE)


def test_a_return_before_cashfree_is_final_waits_and_the_sweep_asks_again(on_cashfree, cashfree, customer):
    payment = customer.payment
    card_to_issuer(customer)
    cashfree_says(cashfree, payment, (CHALLENGE, "PENDING", "credit_card", ""))
    back = customer.get(page(payment, "/back"))
    assert back["Location"] == page(payment, "/status")
    payment.refresh_from_db()
    assert payment.status == S.PROCESSING and payment.acquirer_call_started_at is not None  # kept for the sweep
    # A second return meanwhile (a reload) asks nothing and waits.
    asked = len(sent(cashfree, "GET", f"/orders/{payment.sabpaisa_txn_id}/payments"))
    assert customer.get(page(payment, "/back"))["Location"] == page(payment, "/status")
    assert len(sent(cashfree, "GET", f"/orders/{payment.sabpaisa_txn_id}/payments")) == asked
    cashfree_says(cashfree, payment, (CHALLENGE, "SUCCESS", "credit_card", "BANKREF2"))
    assert hosted_unanswered_reconcile(now=timezone.now() + timedelta(minutes=5)) == 1
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn) == (S.SUCCESS, "BANKREF2")


def test_a_customer_who_never_comes_back_is_settled_by_the_sweeps_status_query(on_cashfree, cashfree, customer):
    payment = customer.payment
    card_to_issuer(customer)
    cashfree_says(cashfree, payment, (CHALLENGE, "SUCCESS", "credit_card", "BANKREF3"))
    # Too early: the customer may still be on the issuer's page.
    payments_expire_sweep()
    assert not sent(cashfree, "GET", f"/orders/{payment.sabpaisa_txn_id}/payments")
    PaymentEvent.objects.filter(payment=payment).update(
        created_at=timezone.now() - ACQUIRER_PAGE_PATIENCE - timedelta(seconds=1))
    payments_expire_sweep()
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn) == (S.SUCCESS, "BANKREF3")
    assert len(sent(cashfree, "GET", f"/orders/{payment.sabpaisa_txn_id}/payments")) == 1


def test_a_return_to_a_payment_not_on_cashfrees_page_asks_nothing(on_cashfree, cashfree, customer):
    payment = customer.payment
    assert customer.get(page(payment, "/back"))["Location"] == page(payment)
    assert cashfree.exchanges == []


# -- net banking and wallets ----------------------------------------------------------------------

@pytest.mark.parametrize("form, field, code, group", [
    ("/netbanking", "bank", "HDFC", "net_banking"), ("/wallet", "wallet", "PHONEPE", "wallet")])
def test_net_banking_and_wallets_go_to_cashfrees_page_and_back_to_the_status_query(
        on_cashfree, cashfree, customer, form, field, code, group):
    payment = customer.payment
    response = customer.post(page(payment, form), {field: code})
    assert response.status_code == 303 and response["Location"].startswith("https://sandbox.cashfree.com/")
    payment.refresh_from_db()
    assert (payment.status, payment.bank_code) == (S.PROCESSING, code)
    # Not the sandbox's bank page: the customer waits for the bank.
    assert customer.get(page(payment))["Location"] == page(payment, "/status")
    cashfree_says(cashfree, payment, ("7", "SUCCESS", group, "NBREF"))
    assert customer.get(page(payment, "/back"))["Location"] == page(payment, "/result")
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn) == (S.SUCCESS, "NBREF")


def test_the_checkout_lists_the_acquirers_own_banks_and_wallets(on_cashfree, cashfree, customer, monkeypatch):
    monkeypatch.setattr(on_cashfree, "banks", {"HDFC": "HDFC Bank"})
    monkeypatch.setattr(on_cashfree, "wallets", {"PHONEPE": "PhonePe"})
    methods = customer.get(page(customer.payment)).content.decode()
    assert 'value="HDFC"' in methods and 'value="SBIN"' not in methods
    assert 'value="PHONEPE"' in methods and 'value="PAYTM"' not in methods and "MobiKwik" not in methods
    refused = customer.post(page(customer.payment, "/netbanking"), {"bank": "SBIN"})
    assert refused.status_code == 200 and cashfree.exchanges == []


def test_cashfree_unreachable_at_the_start_is_a_failed_attempt_not_a_stuck_payment(on_cashfree, cashfree, customer):
    cashfree.prefer_for["/orders"] = "code=500"
    customer.post(page(customer.payment, "/netbanking"), {"bank": "HDFC"})
    payment = customer.payment
    payment.refresh_from_db()
    assert (payment.status, payment.failed_attempts) == (S.PENDING, 1)


# -- NEFT / RTGS ----------------------------------------------------------------------------------

def test_neft_shows_the_account_cashfree_gives(on_cashfree, cashfree, customer):
    cashfree.script[("POST", "/orders/sessions")] = TRANSFER_ANSWER
    response = customer.post(page(customer.payment, "/transfer/start"), {"mode": "NEFT"})
    assert response["Location"] == page(customer.payment, "/transfer")
    challan = customer.get(response["Location"]).content.decode()
    assert "026291800001191" in challan and "YESB0000262" in challan and "SBXG0000001" not in challan


def test_neft_without_an_account_from_cashfree_is_a_failed_attempt(on_cashfree, cashfree, customer):
    customer.post(page(customer.payment, "/transfer/start"), {"mode": "NEFT"})  # Prism's answer is a card's
    payment = customer.payment
    payment.refresh_from_db()
    assert (payment.status, payment.failed_attempts) == (S.PENDING, 1)


# -- UPI: Cashfree collects on its own VPAs, so the gateway's own link is not shown ---------------

def test_with_cashfree_the_upi_method_takes_a_vpa_and_shows_no_qr_of_the_gateways_own_link(
        on_cashfree, cashfree, customer, settings):
    settings.GATEWAY_ENV = "staging"
    methods = customer.get(page(customer.payment)).content.decode()
    assert 'name="vpa"' in methods
    assert "data-upi-qr" not in methods and "upi://pay" not in methods
    assert "success@sandbox" not in methods  # no sandbox test VPAs beside a real acquirer's form


def test_an_earlier_attempts_old_trip_to_cashfree_does_not_cut_the_current_ones_patience(
        on_cashfree, cashfree, customer):
    payment = customer.payment
    card_to_issuer(customer)  # the current attempt: sent to the issuer's page just now
    sent_now = PaymentEvent.objects.filter(payment=payment, detail__acquirer_page=True).get()
    earlier = PaymentEvent.objects.create(payment=payment, kind=sent_now.kind,
                                          detail={**sent_now.detail, "attempt": payment.attempt - 1})
    PaymentEvent.objects.filter(pk=earlier.pk).update(
        created_at=timezone.now() - ACQUIRER_PAGE_PATIENCE - timedelta(minutes=1))
    cashfree_says(cashfree, payment, (CHALLENGE, "SUCCESS", "credit_card", "BANKREF4"))
    payments_expire_sweep()
    assert not sent(cashfree, "GET", f"/orders/{payment.sabpaisa_txn_id}/payments")
    payment.refresh_from_db()
    assert payment.status == S.PROCESSING


# -- CARD_FORM_MODE=processor: Cashfree.js's card fields, the number never here -------------------

@pytest.fixture
def processor_mode(settings):
    settings.CARD_FORM_MODE = "processor"
    settings.CASHFREE_JS_URL = "https://sdk.cashfree.com/js/v3/cashfree.js"
    settings.CASHFREE_BASE_URL = "https://api.cashfree.com/pg"  # the origin the fields call; the client is Prism's


def open_card_fields(customer):
    response = customer.post(page(customer.payment, "/card/fields"), HTTP_ACCEPT="application/json")
    assert response.status_code == 200, response.content
    return response.json()


def test_in_the_processor_card_mode_our_page_has_no_card_field_and_a_posted_number_goes_nowhere(
        on_cashfree, cashfree, customer, processor_mode):
    """No input of ours takes a card number, and one posted anyway, to our old form or beside
    the processor's fields, is neither kept nor sent on."""
    payment = customer.payment
    methods = customer.get(page(payment)).content.decode()
    assert "data-card-fields" in methods and 'data-unavailable="CARD"' not in methods
    for name in ("card_number", "card_expiry", "card_cvv"):
        assert f'name="{name}"' not in methods
    assert customer.post(page(payment, "/card"), CARD_FORM).status_code == 400
    assert customer.post(page(payment, "/card/fields"), CARD_FORM, HTTP_ACCEPT="application/json").status_code == 400
    assert cashfree.exchanges == []
    payment.refresh_from_db()
    assert (payment.status, payment.attempt) == (S.PENDING, 0)


def test_pay_beside_the_fields_opens_the_order_and_hands_the_page_its_session_only(
        on_cashfree, cashfree, customer, processor_mode):
    payment = customer.payment
    opened = open_card_fields(customer)
    [order] = sent(cashfree, "POST", "/orders")
    assert order.body["order_meta"]["return_url"] == f"{PUBLIC}/checkout/{payment.payment_id}/back"
    assert opened["paymentSessionId"] and opened["back"] == page(payment, "/back")
    assert not sent(cashfree, "POST", "/orders/sessions")  # the fields pay, in the browser: no order pay of ours
    payment.refresh_from_db()
    assert (payment.status, payment.payment_mode, payment.card_last4, payment.attempt) == (S.PROCESSING, "CARD", "", 1)
    event = PaymentEvent.objects.get(payment=payment, detail__step="card_fields")
    assert event.detail["acquirer_page"] is True and opened["paymentSessionId"] not in str(event.detail)
    assert customer.get(page(payment))["Location"] == page(payment, "/status")  # waits, no OTP form of ours


def test_back_from_the_fields_the_status_query_records_cashfrees_success(
        on_cashfree, cashfree, customer, processor_mode):
    payment = customer.payment
    open_card_fields(customer)
    cashfree_says(cashfree, payment, ("4100000009", "SUCCESS", "credit_card", "CARDREF1"))
    back = customer.get(page(payment, "/back"), {"order_id": payment.sabpaisa_txn_id})
    assert back["Location"] == page(payment, "/result")
    payment.refresh_from_db()
    assert (payment.status, payment.bank_rrn) == (S.SUCCESS, "CARDREF1")


def test_back_from_the_fields_with_cashfrees_decline_is_a_failed_attempt(
        on_cashfree, cashfree, customer, processor_mode):
    payment = customer.payment
    open_card_fields(customer)
    cashfree_says(cashfree, payment, ("4100000009", "FAILED", "credit_card", ""))
    assert customer.get(page(payment, "/back"))["Location"] == page(payment)
    payment.refresh_from_db()
    assert (payment.status, payment.failed_attempts) == (S.PENDING, 1)


def test_back_from_fields_that_never_paid_offers_the_methods_again_without_a_failure(
        on_cashfree, cashfree, customer, processor_mode):
    payment = customer.payment
    open_card_fields(customer)
    cashfree_says(cashfree, payment)  # Cashfree has no payment on the order: the card never reached it
    assert customer.get(page(payment, "/back"))["Location"] == page(payment)
    payment.refresh_from_db()
    assert (payment.status, payment.failed_attempts, payment.acquirer_call_started_at) == (S.PENDING, 0, None)
    assert open_card_fields(customer)["paymentSessionId"]  # and the card may be tried again


def test_past_the_budget_pay_beside_the_fields_answers_the_calm_words_as_the_fields_show_errors(
        on_cashfree, cashfree, customer, processor_mode, settings):
    """The fields' script shows `errors.card` of a refused open (static/checkout/card-fields.js):
    past the checkout's call budget that is the calm page's sentence, not the API envelope."""
    settings.CHECKOUT_ACQUIRER_CALLS_PER_SESSION = 2
    payment = customer.payment
    open_card_fields(customer)  # the first call
    cashfree_says(cashfree, payment)  # the card never reached Cashfree: the methods again
    assert customer.get(page(payment, "/back"))["Location"] == page(payment)  # the second
    asked = len(cashfree.exchanges)
    refused = customer.post(page(payment, "/card/fields"), HTTP_ACCEPT="application/json")
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    [words] = refused.json()["errors"]["card"]
    assert "tried many times" in words and payment.merchant.name in words
    assert len(cashfree.exchanges) == asked  # nothing asked of Cashfree


def test_pay_beside_the_fields_in_a_stale_tab_goes_on_without_spending_a_call(
        on_cashfree, cashfree, customer, processor_mode, settings):
    """A second tab's Pay after the attempt opened: where the payment is now (409, `next`), as
    any moved-on step; the session's budget is not spent on a call never made."""
    settings.CHECKOUT_ACQUIRER_CALLS_PER_SESSION = 1
    payment = customer.payment
    open_card_fields(customer)
    stale = customer.post(page(payment, "/card/fields"), HTTP_ACCEPT="application/json")
    assert stale.status_code == 409 and stale.json()["next"] == page(payment, "/status")


def test_in_production_the_card_page_loads_cashfrees_script_and_nothing_else_from_outside(
        on_cashfree, cashfree, customer, processor_mode, settings):
    """PCI DSS v4 6.4.3: the page beside the card fields loads our own files and Cashfree.js from
    Cashfree's address, nothing else from outside, under a policy that allows nothing else."""
    from html.parser import HTMLParser
    from urllib.parse import urlsplit

    settings.GATEWAY_ENV, settings.IS_PRODUCTION = "production", True
    response = customer.get(page(customer.payment), secure=True)
    assert response.status_code == 200

    class Loads(HTMLParser):
        found: list = []

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            for name in ("src", "href", "data", "action", "formaction", "srcset", "poster"):
                value = attrs.get(name)
                if value and not (tag == "a" and name == "href"):
                    self.found.append((tag, value))

    loads = Loads()
    loads.found = []
    loads.feed(response.content.decode())
    outside = sorted({value for tag, value in loads.found if urlsplit(value).netloc or value.startswith("//")})
    assert outside == ["https://sdk.cashfree.com/js/v3/cashfree.js"]
    scripts = [value for tag, value in loads.found if tag == "script"]
    assert scripts[-2:] == ["https://sdk.cashfree.com/js/v3/cashfree.js", "/static/checkout/card-fields.js"]
    assert all(not urlsplit(value).netloc for value in scripts[:-2])
    policy = dict(part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";")
                  if part.strip())
    assert policy["default-src"] == "'self'"
    assert policy["script-src"] == "'self' https://sdk.cashfree.com"
    assert policy["frame-src"] == "https://sdk.cashfree.com https://api.cashfree.com"
    assert policy["connect-src"] == "'self' https://sdk.cashfree.com https://api.cashfree.com"
    assert "'unsafe-inline'" not in policy["script-src"] and "nonce" not in policy["script-src"]


def test_in_production_our_own_form_with_the_pci_declaration_loads_nothing_of_cashfrees(
        on_cashfree, cashfree, customer, settings):
    """CARD_FORM_MODE=own (production only beside PCI_DSS_COMPLIANT=true, checked at start):
    today's form, and the page's policy names no processor's origin."""
    settings.GATEWAY_ENV, settings.IS_PRODUCTION = "production", True
    settings.CARD_FORM_MODE, settings.PCI_DSS_COMPLIANT = "own", True
    response = customer.get(page(customer.payment), secure=True)
    methods = response.content.decode()
    assert 'name="card_number"' in methods and "data-card-fields" not in methods and "cashfree.js" not in methods
    assert "cashfree.com" not in response["Content-Security-Policy"]


# -- row locks per step (issue 27: at most 2 per request) ------------------------------------------

def payment_row_locks(client_call) -> int:
    """How many times one request locks a payments_payment row (SELECT ... FOR UPDATE)."""
    with CaptureQueriesContext(connection) as queries:
        client_call()
    return sum(1 for query in queries.captured_queries
               if "FOR UPDATE" in query["sql"] and 'FROM "payments_payment"' in query["sql"])


def test_each_step_of_a_card_payment_through_the_issuers_page_locks_the_payment_at_most_twice(
        on_cashfree, cashfree, customer):
    payment = customer.payment
    to_issuer = payment_row_locks(lambda: card_to_issuer(customer))
    cashfree_says(cashfree, payment, (CHALLENGE, "SUCCESS", "credit_card", "BANKREF1"))
    back = payment_row_locks(lambda: customer.get(page(payment, "/back"), {"order_id": payment.sabpaisa_txn_id}))
    payment.refresh_from_db()
    assert payment.status == S.SUCCESS
    print(f"payment row locks: to the issuer's page {to_issuer}, back from it {back}")
    assert max(to_issuer, back) <= 2, (to_issuer, back)
