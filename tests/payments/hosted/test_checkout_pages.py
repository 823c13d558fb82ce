"""The checkout pages without a browser: access, CSP, CSRF, production, what pages never show."""
from __future__ import annotations

import re
import socket
from urllib.parse import parse_qsl

import pytest
from django.test import Client
from django.utils import timezone

from payments.models import Payment
from tests.payments.hosted.conftest import independent_return_signature
from tests.support.factories import session_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(create_session, shop):
    return create_session(shop)


def enter(client, session):
    return client.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")


def test_a_valid_client_secret_opens_the_page_and_leaves_it_out_of_the_address(client, session):
    response = enter(client, session)
    assert response.status_code == 303
    assert response["Location"] == f"/checkout/{session['paymentId']}"
    page = client.get(response["Location"])
    assert page.status_code == 200
    html = page.content.decode()
    assert "Chai Point Stores" in html and "₹1,499.00" in html and "Masala chai sampler" in html
    assert session["clientSecret"] not in html
    for method in ("UPI", "CARD", "NB", "WALLET", "NEFT", "RTGS", "CHALLAN"):
        assert html.count(f'data-method="{method}"') == 1
    # RTGS starts at Rs 2,00,000 (issue 19): its control stays, as not available (issue 26).
    assert 'id="method-RTGS" data-available="false"' in html


@pytest.mark.parametrize("secret", ["", "wrong", None])
def test_without_a_valid_client_secret_nothing_of_the_payment_is_shown(client, session, secret):
    url = f"/checkout/{session['paymentId']}" + ("" if secret is None else f"?clientSecret={secret}")
    response = client.get(url)
    assert response.status_code == 404
    assert response.json()["errorCode"] == "NOT_FOUND"
    assert b"Chai" not in response.content and b"1,499" not in response.content


def test_the_secret_of_one_session_does_not_open_another(client, create_session, shop):
    first, second = create_session(shop), create_session(shop)
    response = client.get(f"/checkout/{second['paymentId']}?clientSecret={first['clientSecret']}")
    assert response.status_code == 404
    enter(client, first)
    assert client.get(f"/checkout/{second['paymentId']}").status_code == 404


def test_access_is_per_browser_session(client, session):
    enter(client, session)
    assert Client().get(f"/checkout/{session['paymentId']}").status_code == 404


def test_guessing_client_secrets_is_limited_per_address(client, create_session, shop):
    from payments.checkout.access import BAD_SECRET_LIMIT

    # Issue 18: only failures are limited. Before, the right secret was refused here too.
    session, elsewhere = create_session(shop), create_session(shop)
    for attempt in range(BAD_SECRET_LIMIT):
        assert client.get(f"/checkout/pay_nothing{attempt}?clientSecret=guess").status_code == 404
    response = client.get(f"/checkout/{session['paymentId']}?clientSecret=guess")
    assert response.status_code == 429
    assert response.json()["errorCode"] == "RATE_LIMITED" and int(response["Retry-After"]) > 0
    assert client.get(f"/checkout/{session['paymentId']}").status_code == 429
    other_address = Client(REMOTE_ADDR="10.1.2.3")
    assert other_address.get(f"/checkout/{elsewhere['paymentId']}?clientSecret=guess").status_code == 404


def test_a_valid_client_secret_opens_its_session_however_much_its_address_failed(client, session):
    from payments.checkout.access import BAD_SECRET_LIMIT

    prober = Client()  # someone else behind the customer's address (a NAT, a carrier, a proxy)
    for attempt in range(BAD_SECRET_LIMIT * 2):
        prober.get(f"/checkout/pay_nothing{attempt}?clientSecret=guess")
    assert prober.get(f"/checkout/{session['paymentId']}?clientSecret=guess").status_code == 429
    response = enter(client, session)
    assert response.status_code == 303
    assert client.get(response["Location"]).status_code == 200


def test_failures_are_limited_per_payment_whatever_the_address(client, session):
    from payments.checkout.access import BAD_SECRET_LIMIT

    for attempt in range(BAD_SECRET_LIMIT):
        prober = Client(REMOTE_ADDR=f"198.51.100.{attempt + 1}")  # a different address each time
        assert prober.get(f"/checkout/{session['paymentId']}?clientSecret=guess").status_code == 404
    fresh = Client(REMOTE_ADDR="203.0.113.77")
    assert fresh.get(f"/checkout/{session['paymentId']}?clientSecret=guess").status_code == 429
    assert fresh.get(f"/checkout/{session['paymentId']}").status_code == 429
    assert enter(client, session).status_code == 303  # the customer still gets in


def test_the_link_limiter_fails_open_when_redis_is_down(client, session, settings, caplog):
    # A Redis nobody listens on: the counters cannot be read or written.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.CACHES = {"default": {"BACKEND": "gateway.perf.cache.RedisCache",
                                   "LOCATION": f"redis://127.0.0.1:{port}/0"}}
    wrong = client.get(f"/checkout/{session['paymentId']}?clientSecret=guess")
    assert wrong.status_code == 404 and wrong.json()["errorCode"] == "NOT_FOUND"
    assert client.get(f"/checkout/{session['paymentId']}").status_code == 404
    response = enter(client, session)
    assert response.status_code == 303
    assert client.get(response["Location"]).status_code == 200
    assert any("checkout link limit not applied" in r.getMessage() for r in caplog.records)


def test_the_link_limiter_fails_open_when_redis_hangs(client, session, settings, caplog):
    # A "Redis" that accepts connections and never answers (a hung or SIGSTOPped server); the
    # cache's socket timeout (settings) turns the hang into an error, which must not become a 500.
    with socket.socket() as hung:
        hung.bind(("127.0.0.1", 0))
        hung.listen(16)
        port = hung.getsockname()[1]
        settings.CACHES = {"default": {"BACKEND": "gateway.perf.cache.RedisCache",
                                       "LOCATION": f"redis://127.0.0.1:{port}/0",
                                       "OPTIONS": {"socket_timeout": 0.2, "socket_connect_timeout": 0.2}}}
        wrong = client.get(f"/checkout/{session['paymentId']}?clientSecret=guess")
        assert wrong.status_code == 404 and wrong.json()["errorCode"] == "NOT_FOUND"
        assert enter(client, session).status_code == 303
    assert any("checkout link limit not applied" in r.getMessage() for r in caplog.records)


def test_a_customer_with_access_is_not_locked_out_by_probing_from_the_same_address(client, session):
    from payments.checkout.access import BAD_SECRET_LIMIT

    enter(client, session)
    prober = Client()  # someone else behind the same address (a NAT, an office, a mobile carrier)
    for attempt in range(BAD_SECRET_LIMIT):
        prober.get(f"/checkout/pay_nothing{attempt}?clientSecret=guess")
    assert prober.get(f"/checkout/{session['paymentId']}").status_code == 429
    assert client.get(f"/checkout/{session['paymentId']}").status_code == 200
    assert enter(client, session).status_code == 303  # opening the merchant's link again
    response = client.post(f"/checkout/{session['paymentId']}/card",
                           {"card_number": "4111 1111 1111 1111", "card_expiry": "12/39", "card_cvv": "123"})
    assert response.status_code == 303
    assert client.post(response["Location"], {"otp": "123456"}).status_code == 303
    assert Payment.objects.get(payment_id=session["paymentId"]).status == "SUCCESS"


def test_behind_trusted_proxies_the_limit_counts_the_address_they_forwarded(session, settings):
    from payments.checkout.access import BAD_SECRET_LIMIT

    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.5"  # every request reaches the service from the load balancer
    prober = Client(REMOTE_ADDR=proxy)
    for attempt in range(BAD_SECRET_LIMIT):
        # The prober writes its own X-Forwarded-For entries; the proxy appends the real one.
        forwarded = f"198.51.100.{attempt}, 203.0.113.9"
        prober.get(f"/checkout/pay_nothing{attempt}?clientSecret=guess", HTTP_X_FORWARDED_FOR=forwarded)
    limited = prober.get(f"/checkout/{session['paymentId']}", HTTP_X_FORWARDED_FOR="1.1.1.1, 203.0.113.9")
    assert limited.status_code == 429
    customer = Client(REMOTE_ADDR=proxy)
    mistyped = customer.get("/checkout/pay_other?clientSecret=guess", HTTP_X_FORWARDED_FOR="192.0.2.44")
    assert mistyped.status_code == 404  # another address behind the same proxy: not limited
    response = customer.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}",
                            HTTP_X_FORWARDED_FOR="192.0.2.44")
    assert response.status_code == 303


def test_without_trusted_proxies_x_forwarded_for_is_ignored(session, settings):
    from payments.checkout.access import BAD_SECRET_LIMIT

    settings.TRUSTED_PROXY_COUNT = 0
    prober = Client()
    for attempt in range(BAD_SECRET_LIMIT):
        prober.get(f"/checkout/pay_nothing{attempt}?clientSecret=guess",
                   HTTP_X_FORWARDED_FOR=f"198.51.100.{attempt}")
    response = prober.get(f"/checkout/{session['paymentId']}?clientSecret=guess",
                          HTTP_X_FORWARDED_FOR="192.0.2.44")
    assert response.status_code == 429


@pytest.mark.parametrize(("proxies", "remote", "forwarded", "expected"), [
    (0, "203.0.113.9", "198.51.100.1", "203.0.113.9"),
    (1, "10.0.0.5", "198.51.100.1", "198.51.100.1"),
    (1, "10.0.0.5", "6.6.6.6, 198.51.100.1", "198.51.100.1"),           # a forged entry on the left
    (2, "10.0.0.5", "6.6.6.6, 198.51.100.1, 10.0.0.4", "198.51.100.1"),
    (2, "10.0.0.5", "198.51.100.1", "10.0.0.5"),                        # fewer hops than proxies
    (1, "10.0.0.5", "", "10.0.0.5"),
    (1, "10.0.0.5", "not-an-address", "10.0.0.5"),
    (1, "10.0.0.5", "2001:db8::1", "2001:db8::1"),
])
def test_client_ip_counts_trusted_proxies_from_the_right(settings, rf, proxies, remote, forwarded, expected):
    from gateway.core.clientip import client_ip

    settings.TRUSTED_PROXY_COUNT = proxies
    request = rf.get("/", REMOTE_ADDR=remote, **({"HTTP_X_FORWARDED_FOR": forwarded} if forwarded else {}))
    assert client_ip(request) == expected


def test_pages_carry_the_content_security_policy_and_no_inline_code(client, session):
    enter(client, session)
    response = client.get(f"/checkout/{session['paymentId']}")
    policy = response["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy and "style-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy
    html = response.content.decode()
    assert not re.search(r"<style", html)
    assert not re.search(r"\sstyle=", html)
    assert not re.search(r"<script(?![^>]*\ssrc=)", html)
    assert not re.search(r"\son[a-z]+=", html)
    assert not re.search(r"(src|href)=\"https?://", html)  # nothing external
    assert response["Cache-Control"].startswith("max-age=0") or "no-cache" in response["Cache-Control"]


def test_api_responses_do_not_get_the_checkout_policy(api, shop):
    response = api.post("/api/v2/payments", session_body(shop), format="json", HTTP_X_API_KEY=shop.api_key)
    assert "Content-Security-Policy" not in response


def test_forms_are_protected_against_csrf(session):
    browser = Client(enforce_csrf_checks=True)
    enter(browser, session)
    response = browser.post(f"/checkout/{session['paymentId']}/cancel")
    assert response.status_code == 400 or response.status_code == 403
    assert Payment.objects.get(payment_id=session["paymentId"]).status == "PENDING"
    page = browser.get(f"/checkout/{session['paymentId']}").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    response = browser.post(f"/checkout/{session['paymentId']}/cancel", {"csrfmiddlewaretoken": token})
    assert response.status_code == 303
    assert Payment.objects.get(payment_id=session["paymentId"]).status == "FAILED"


def test_card_details_are_never_shown_again_nor_stored(client, session):
    enter(client, session)
    number, cvv = "4111111111111112", "987"  # fails the Luhn check
    response = client.post(f"/checkout/{session['paymentId']}/card",
                           {"card_number": number, "card_expiry": "12/39", "card_cvv": cvv})
    html = response.content.decode()
    assert response.status_code == 200 and "not valid" in html
    assert number not in html and "4111 1111 1111 1112" not in html and "12/39" not in html
    assert 'value="987"' not in html
    payment = Payment.objects.get(payment_id=session["paymentId"])
    assert payment.status == "PENDING"

    response = client.post(f"/checkout/{session['paymentId']}/card",
                           {"card_number": "4111 1111 1111 1111", "card_expiry": "12/39", "card_cvv": "987"})
    assert response.status_code == 303
    payment.refresh_from_db()
    assert (payment.status, payment.card_last4, payment.card_network, payment.card_issuer) == (
        "PROCESSING", "1111", "VISA", "Sandbox Bank of India")
    from django.contrib.sessions.models import Session

    row = Payment.objects.filter(pk=payment.pk).values().get()
    for random_field in ("client_secret_hash", "sabpaisa_txn_id", "payment_id"):
        row.pop(random_field)
    stored = " ".join([str(row), str(list(payment.events.values("detail"))),
                       *(str(s.get_decoded()) for s in Session.objects.all())])
    assert "4111111111111111" not in stored and "4111 1111" not in stored
    assert not re.search(r"(?<![A-Za-z0-9])987(?![A-Za-z0-9])", stored)
    challenge = client.get(response["Location"]).content.decode()
    assert "4111111111111111" not in challenge and "ending 1111" in challenge


def test_save_card_consent_is_offered_in_staging_only(client, session, settings):
    enter(client, session)
    assert 'name="save_card"' in client.get(f"/checkout/{session['paymentId']}").content.decode()
    settings.IS_PRODUCTION = True
    assert 'name="save_card"' not in client.get(f"/checkout/{session['paymentId']}").content.decode()


def test_sandbox_pages_are_not_found_in_production(client, session, settings):
    enter(client, session)
    client.post(f"/checkout/{session['paymentId']}/netbanking", {"bank": "HDFC"})
    settings.IS_PRODUCTION = True
    assert client.get(f"/sandbox/bank/{session['paymentId']}").status_code == 404
    assert client.get("/sandbox/transfers").status_code == 404
    # The customer waits on the status page instead of the sandbox bank.
    assert client.get(f"/checkout/{session['paymentId']}")["Location"].endswith("/status")


def test_a_bank_answer_sent_while_another_is_being_confirmed_is_shown_on_the_bank_page(client, session):
    enter(client, session)
    client.post(f"/checkout/{session['paymentId']}/netbanking", {"bank": "HDFC"})
    # The other tab's answer is with the acquirer (its claim is committed, its call not answered).
    Payment.objects.filter(payment_id=session["paymentId"]).update(acquirer_call_started_at=timezone.now())
    response = client.post(f"/sandbox/bank/{session['paymentId']}", {"decision": "approve"})
    assert response.status_code == 200
    assert "already being confirmed with the bank" in response.content.decode()
    assert Payment.objects.get(payment_id=session["paymentId"]).status == "PROCESSING"


def test_a_final_payment_shows_our_result_page_then_the_signed_return(client, session, shop):
    # Issue 19: the outcome on our own page first, then returnUrl (was: straight to returnUrl).
    enter(client, session)
    pid = session["paymentId"]
    response = client.post(f"/checkout/{pid}/cancel")
    assert response.status_code == 303 and response["Location"] == f"/checkout/{pid}/result"
    page = client.get(response["Location"])
    html = page.content.decode()
    payment = Payment.objects.get(payment_id=pid)
    assert page.status_code == 200 and 'data-payment-status="FAILED"' in html and "Payment cancelled" in html
    assert "₹1,499.00" in html and "Chai Point Stores" in html and payment.sabpaisa_txn_id in html
    assert f'<noscript><meta http-equiv="refresh" content="5;url=/checkout/{pid}/return"></noscript>' in html
    assert 'data-redirect-after="5"' in html  # with JavaScript: the same wait, and a way to stay
    assert f'href="/checkout/{pid}/return" data-action="return"' in html
    assert client.get(f"/checkout/{pid}")["Location"] == f"/checkout/{pid}/result"  # any page of it
    back = client.get(f"/checkout/{pid}/return")
    assert back.status_code == 303 and back["Location"].startswith("http://merchant.test/shop/return?")
    query = back["Location"].split("?", 1)[1]
    assert "status=FAILED" in query
    assert independent_return_signature(shop.secret_key, query) == dict(
        parse_qsl(query))["signature"]


def test_reloading_a_finished_page_adds_nothing_to_the_payments_story(client, session):
    # Issue 18 item 5: every reload of a final payment's page used to append a redirect event.
    enter(client, session)
    pid = session["paymentId"]
    client.post(f"/checkout/{pid}/cancel")
    payment = Payment.objects.get(payment_id=pid)
    before = payment.events.count()
    for _ in range(3):
        assert client.get(f"/checkout/{pid}/result").status_code == 200
        assert client.get(f"/checkout/{pid}").status_code == 303
    assert payment.events.count() == before
    for _ in range(3):
        assert client.get(f"/checkout/{pid}/return").status_code == 303
    assert payment.events.count() == before + 1
    assert payment.events.filter(kind="redirect").count() == 1


def test_staff_can_read_payments_in_the_admin_but_not_change_them(admin_client, session):
    payment = Payment.objects.get(payment_id=session["paymentId"])
    listing = admin_client.get("/admin/payments/payment/")
    assert listing.status_code == 200 and payment.sabpaisa_txn_id in listing.content.decode()
    detail = admin_client.get(f"/admin/payments/payment/{payment.pk}/change/")
    assert detail.status_code == 200
    assert payment.client_secret_hash not in detail.content.decode()
    admin_client.post(f"/admin/payments/payment/{payment.pk}/change/", {"status": "SUCCESS"})
    payment.refresh_from_db()
    assert payment.status == "PENDING"
    assert admin_client.get("/admin/payments/payment/add/").status_code in (401, 403)


HTML = {"HTTP_ACCEPT": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


@pytest.mark.parametrize("url", ["/checkout/{pid}?clientSecret=wrong", "/checkout/{pid}", "/checkout/{pid}/nowhere"])
def test_a_browser_opening_a_bad_link_gets_an_html_page_not_the_envelope(client, session, url):
    response = client.get(url.format(pid=session["paymentId"]), **HTML)
    html = response.content.decode()
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")
    assert 'data-error="NOT_FOUND"' in html and "This payment link does not work" in html
    assert "Chai" not in html and "1,499" not in html and '<html lang="en' in html
    # An API client on the same address keeps the envelope.
    assert client.get(url.format(pid=session["paymentId"])).json()["errorCode"] == "NOT_FOUND"


def test_a_browser_over_the_bad_link_limit_gets_an_html_page_with_retry_after(client, session):
    from payments.checkout.access import BAD_SECRET_LIMIT

    for attempt in range(BAD_SECRET_LIMIT):
        client.get(f"/checkout/{session['paymentId']}?clientSecret=guess{attempt}")
    # Issue 18 item 1: only failures are limited, so the over-the-limit request is a wrong link.
    response = client.get(f"/checkout/{session['paymentId']}?clientSecret=guess", **HTML)
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert 'data-error="RATE_LIMITED"' in response.content.decode()


def test_a_browser_posting_a_stale_form_gets_an_html_page(session):
    browser = Client(enforce_csrf_checks=True)
    enter(browser, session)
    response = browser.post(f"/checkout/{session['paymentId']}/cancel", **HTML)
    assert response.status_code == 400 and 'data-error="VALIDATION_ERROR"' in response.content.decode()
    assert Payment.objects.get(payment_id=session["paymentId"]).status == "PENDING"


def test_a_browser_opening_a_finished_link_sees_the_result_page(client, session):
    enter(client, session)
    client.post(f"/checkout/{session['paymentId']}/cancel")
    fresh_browser = Client()
    response = fresh_browser.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}",
                                 follow=True, **HTML)
    assert response.status_code == 200 and 'data-payment-status="FAILED"' in response.content.decode()
