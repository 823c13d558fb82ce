"""Journeys that need the real Celery worker (a subprocess on the test database and broker):
UPI approved after the sandbox delay while the customer waits, and sessions expiring on time."""
from __future__ import annotations

import pytest

from payments.models import Payment
from tests.payments.hosted.conftest import independent_return_signature, submit, wait_for_return
from tests.support.waiting import wait_until
from tests.support.worker import CeleryWorker
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def worker(django_db_setup, django_db_blocker, tmp_path_factory):
    with django_db_blocker.unblock():
        celery = CeleryWorker(beat=True, log_dir=tmp_path_factory.mktemp("hosted-worker"))
        celery.start()
    yield celery
    celery.stop()


def test_upi_collect_approved_after_the_delay_while_the_customer_waits(worker, checkout, start, merchant_site,
                                                                       shop, settings):
    settings.SANDBOX_UPI_SUCCESS_DELAY_SECONDS = 1
    session = start()
    checkout.click("[data-method=UPI]")
    checkout.fill("input[name=vpa]", "success@sandbox")
    submit(checkout, "UPI")
    # The waiting page reloads itself (no JavaScript needed) until the worker approves.
    assert checkout.locator("[data-poll]").count() == 1  # it asks the server until something changes
    assert "success@sandbox" in checkout.locator("main").inner_text()
    params = wait_for_return(checkout, merchant_site)
    payment = Payment.objects.get(payment_id=session["paymentId"])
    assert params["status"] == "SUCCESS" == payment.status, worker.log_text()[-2000:]
    assert params["payment_mode"] == "UPI" and params["paid_amount"] == str(payment.amount)
    assert payment.bank_rrn and payment.payer_vpa == "success@sandbox"
    assert params["signature"] == independent_return_signature(shop.secret_key, checkout.url.split("?", 1)[1])


def test_an_unpaid_session_expires_on_time_by_itself(worker, transactional_db, create_session, shop, settings):
    settings.CHECKOUT_SESSION_TTL_SECONDS = 2
    session = create_session(shop)
    payment = Payment.objects.get(payment_id=session["paymentId"])
    assert payment.status == "PENDING"
    # Nobody opens the page: the beat's expiry sweep, every second, ends it.
    wait_until(lambda: Payment.objects.filter(pk=payment.pk, status="EXPIRED").exists(), timeout=45,
               message="the session did not expire:\n" + worker.log_text()[-2000:])
    payment.refresh_from_db()
    assert payment.completed_at >= payment.expires_at
    event = WebhookEvent.objects.get(subject_id=payment.sabpaisa_txn_id)
    assert event.event_type == "payment.expired" and event.payload["status"] == "EXPIRED"


def test_a_customer_on_the_page_when_time_runs_out_is_sent_back_expired(worker, checkout, start, merchant_site,
                                                                         settings):
    settings.CHECKOUT_SESSION_TTL_SECONDS = 3
    session = start()
    checkout.locator("[data-method=CARD]").wait_for()
    # The page's countdown reloads it at zero; the server finds the session expired.
    params = wait_for_return(checkout, merchant_site)
    assert params["status"] == "EXPIRED"
    assert Payment.objects.get(payment_id=session["paymentId"]).status == "EXPIRED"
