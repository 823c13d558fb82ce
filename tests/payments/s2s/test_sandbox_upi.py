"""The sandbox UPI app: POST /sandbox/upi/pay and the /sandbox/upi page (CONTRACT.md, Sandbox)."""
from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from payments.models import Payment
from tests.payments.s2s.conftest import assert_error
from tests.support.factories import signed_body

PAY = "/sandbox/upi/pay"
PAGE = "/sandbox/upi"


@pytest.fixture
def created(s2s_merchant, post):
    """A fresh S2S payment's response body."""

    def make(**overrides) -> dict:
        response = post(s2s_merchant, signed_body(s2s_merchant, **overrides))
        assert response.status_code == 201, response.json()
        return response.json()

    return make


def pay(api, link, vpa):
    return api.post(PAY, {"upiUri": link, "payerVpa": vpa}, format="json")


def test_paying_a_qr_string_answers_202(api, created):
    data = created(paymentMode="UPI_QR")
    response = pay(api, data["upiQrString"], "success@sandbox")
    assert response.status_code == 202
    body = response.json()
    assert body["success"] is True
    assert (body["txnId"], body["paymentId"], body["status"], body["payerVpa"]) == (
        data["txnId"], data["paymentId"], "PROCESSING", "success@sandbox")
    assert body["traceId"] == response["X-Trace-Id"]


def test_paying_an_intent_url_with_the_failure_vpa_fails_it_at_once(api, created):
    data = created(paymentMode="UPI_INTENT")
    response = pay(api, data["intentUrl"], "failure@sandbox")
    assert response.status_code == 202
    assert response.json()["status"] == "FAILED"
    assert Payment.objects.get(payment_id=data["paymentId"]).status == "FAILED"


def test_an_unknown_vpa_is_400_in_the_envelope(api, created):
    assert_error(pay(api, created()["upiQrString"], "rich@okbank"), "VALIDATION_ERROR", field="payerVpa")


def test_an_already_final_payment_is_400(api, created):
    link = created()["upiQrString"]
    pay(api, link, "failure@sandbox")
    assert_error(pay(api, link, "success@sandbox"), "VALIDATION_ERROR", field="upiUri")


def test_an_expired_payment_is_400(api, created):
    data = created()
    Payment.objects.filter(payment_id=data["paymentId"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    body = assert_error(pay(api, data["upiQrString"], "success@sandbox"), "VALIDATION_ERROR", field="upiUri")
    assert "expired" in body["errorMessage"]


def test_a_link_of_no_payment_is_400(api, db):
    link = "upi://pay?pa=gateway@sandbox&pn=X&am=1.00&cu=INR&tr=SPNOSUCHTXN0000000&tn=x"
    assert_error(pay(api, link, "success@sandbox"), "VALIDATION_ERROR", field="upiUri")


@pytest.mark.parametrize("raw", [b"[]", b"{oops"])
def test_a_body_that_is_not_a_json_object_is_400(api, db, raw):
    response = api.generic("POST", PAY, raw, content_type="application/json")
    assert_error(response, "VALIDATION_ERROR", field="body")


def test_get_on_the_pay_endpoint_is_405_in_the_envelope(api, db):
    assert_error(api.get(PAY), "METHOD_NOT_ALLOWED", status=405)


@pytest.mark.parametrize(("method", "path"), [
    ("get", PAGE), ("post", PAGE), ("put", PAGE), ("get", PAY), ("post", PAY), ("get", "/sandbox/anything"),
])
def test_every_sandbox_path_is_not_found_in_production(db, settings, method, path):
    settings.IS_PRODUCTION = True
    response = getattr(Client(enforce_csrf_checks=True), method)(path)
    assert_error(response, "NOT_FOUND", status=404)


# --- the page, for a person --------------------------------------------------------------------

def test_the_page_is_a_form_with_the_test_vpas_and_a_csrf_token(client, db):
    response = client.get(PAGE, {"upiUri": "upi://pay?pa=x@y"})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'name="csrfmiddlewaretoken"' in html
    assert 'name="upiUri"' in html and "upi://pay?pa=x@y" in html
    for vpa in ("success@sandbox", "failure@sandbox", "timeout@sandbox"):
        assert f'value="{vpa}"' in html


def test_the_page_pays_with_a_plain_form_post_carrying_the_csrf_token(created):
    data = created()
    browser = Client(enforce_csrf_checks=True)
    form = browser.get(PAGE).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    response = browser.post(PAGE, {"csrfmiddlewaretoken": token, "upiUri": data["upiQrString"],
                                   "payerVpa": "failure@sandbox"})
    assert response.status_code == 202
    html = response.content.decode()
    assert data["txnId"] in html and '<dd id="result-status">FAILED</dd>' in html
    assert Payment.objects.get(payment_id=data["paymentId"]).status == "FAILED"


def test_the_page_refuses_a_post_without_the_csrf_token(created):
    data = created()
    response = Client(enforce_csrf_checks=True).post(PAGE, {"upiUri": data["upiQrString"],
                                                            "payerVpa": "failure@sandbox"})
    assert response.status_code in (400, 403)
    assert Payment.objects.get(payment_id=data["paymentId"]).status == "PROCESSING"


def test_the_page_shows_why_a_link_was_not_paid(client, created):
    data = created()
    response = client.post(PAGE, {"upiUri": data["upiQrString"], "payerVpa": "nobody@nowhere"})
    assert response.status_code == 400
    assert 'role="alert"' in response.content.decode()
    assert "not a sandbox test VPA" in response.content.decode()


def _sandbox_paths(patterns=None, prefix=""):
    """Every route under /sandbox/ of the whole URLconf, path parameters filled with "x"."""
    from django.urls import URLPattern, URLResolver, get_resolver

    for entry in get_resolver().url_patterns if patterns is None else patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from _sandbox_paths(entry.url_patterns, route)
        elif isinstance(entry, URLPattern) and route.startswith("sandbox/"):
            yield "/" + re.sub(r"<[^>]+>", "x", route)


def test_every_route_under_sandbox_of_every_app_is_not_found_in_production(db, settings):
    paths = sorted(set(_sandbox_paths()))
    assert PAGE in paths and PAY in paths
    settings.IS_PRODUCTION = True
    client = Client(enforce_csrf_checks=True)
    for path in paths:
        response = client.get(path)
        assert (path, response.status_code) == (path, 404)
        assert_error(response, "NOT_FOUND", status=404)


# --- the live SabPaisa staging's test VPAs (issue 17) ----------------------------------------

@pytest.mark.parametrize("alias, canonical, status", [
    ("success@upi", "success@sandbox", "PROCESSING"),
    ("FAILURE@UPI", "failure@sandbox", "FAILED"),
    ("timeout@upi", "timeout@sandbox", "PROCESSING"),
])
def test_the_live_stagings_upi_vpas_are_aliases_of_ours(api, created, alias, canonical, status):
    data = created()
    response = pay(api, data["upiQrString"], alias)
    assert response.status_code == 202, response.json()
    assert (response.json()["status"], response.json()["payerVpa"]) == (status, canonical)
    payment = Payment.objects.get(payment_id=data["paymentId"])
    # Recorded as the VPA it stands for, so the approval task and the sweeps treat it the same.
    assert (payment.status, payment.payer_vpa) == (status, canonical)


def test_another_upi_handle_is_still_not_a_test_vpa(api, created):
    body = assert_error(pay(api, created()["upiQrString"], "rich@upi"), "VALIDATION_ERROR", field="payerVpa")
    assert "success@upi" in body["errorMessage"]
