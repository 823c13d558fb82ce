"""Every factory of the tests, in one place: merchants with known credentials, staff in a
role, payments in every status (made through the real transitions, or told as a whole story
by the real services), tokens made as in life, and the request bodies the merchants send
(hosted sessions, S2S payments, refunds, tokens), signed as the official SDK signs them.
Fixtures in the conftest.py files are thin wrappers around these."""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from datetime import date, timedelta

from django.contrib.auth.models import Group, User
from django.db import transaction
from django.test import Client
from django.utils import timezone

from gateway.core.signing import compute_checksum
from gateway.platform.models import Merchant
from gateway.platform.services import merchant_create
from payments.acquirer.sandbox.acquirer import new_rrn
from payments.cards import CardInput
from payments.locks import lock_payment
from payments.models import Payment
from payments.services.hosted import hosted_card_pay, hosted_card_verify_otp, hosted_payment_create, hosted_redirect
from payments.services.transitions import (
    payment_expire,
    payment_mark_failed,
    payment_mark_processing,
    payment_mark_succeeded,
)
from refunds.models import Refund
from refunds.services import refund_create
from refunds.tasks import refund_process
from refunds.transitions import refund_totals_follow
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_attempt_run

_counter = itertools.count(1)


# --- merchants and staff ------------------------------------------------------------------------
@dataclass
class TestMerchant:
    merchant: Merchant
    code: str
    api_key: str
    secret_key: str
    webhook_secret: str

    @property
    def headers(self) -> dict:
        """Headers for Django's test client (HTTP_ prefixed)."""
        return {"HTTP_X_API_KEY": self.api_key, "HTTP_X_MERCHANT_ID": self.code}

    @property
    def http_headers(self) -> dict:
        """Headers for a real HTTP client (requests/urllib)."""
        return {"X-Api-Key": self.api_key, "X-Merchant-Id": self.code, "Content-Type": "application/json"}

    def checksum(self, *parts) -> str:
        return compute_checksum(self.secret_key, *parts)


def make_merchant(*, code: str | None = None, s2s: bool = True, webhook_url: str = "",
                  rate_limit: int | None = 1000, name: str | None = None) -> TestMerchant:
    code = code or f"M{next(_counter):04d}{int(time.time() * 1000) % 100000}"
    creds = merchant_create(code=code, name=name or f"Merchant {code}", webhook_url=webhook_url,
                            s2s_enabled=s2s, rate_limit=rate_limit)
    return TestMerchant(Merchant.objects.get(code=code), code, creds.apiKey, creds.secretKey, creds.webhookSecret)


def now() -> int:
    return int(time.time())


_people = itertools.count(1)


def staff_in(role: str | None, *, username: str | None = None, password: str | None = None) -> User:
    """A staff user in `role`'s group (the real groups the migration made). Without a password
    (the tests log in with force_login), so no password hash is computed: those take a third
    of a second each."""
    user = User.objects.create_user(username or f"{role or 'nobody'}-{next(_people)}", password=password,
                                    is_staff=True)
    if role:
        user.groups.add(Group.objects.get(name=role))
    return user


# --- payments -------------------------------------------------------------------------------------

_orders = itertools.count(1)


def _merchant_of(merchant):
    return getattr(merchant, "merchant", merchant)  # a TestMerchant or a Merchant


def make_payment(merchant, *, amount: int = 10_000, status: str = Payment.Status.SUCCESS,
                 payment_mode: str = Payment.Mode.UPI, **fields) -> Payment:
    """A hosted payment of `amount` paise moved to `status` the way real ones are: PENDING,
    then payment_mark_processing, then succeeded / failed / expired. `fields` (payer_vpa,
    card_last4, bank_code ...) are recorded when the method is chosen."""
    payment = Payment.objects.create(
        merchant=_merchant_of(merchant), flow=Payment.Flow.HOSTED, status=Payment.Status.PENDING,
        merchant_txn_id=f"ORD{next(_orders):05d}T{time.time_ns() % 10**9}", amount=amount,
        return_url="https://merchant.example/return", expires_at=timezone.now() + timedelta(minutes=30),
    )
    if status == Payment.Status.PENDING:
        return payment
    if status == Payment.Status.EXPIRED:
        Payment.objects.filter(pk=payment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        return payment_expire(payment_id=payment.pk)
    if payment_mode == Payment.Mode.UPI:
        fields.setdefault("payer_vpa", "success@sandbox")
    payment_mark_processing(payment_id=payment.pk, payment_mode=payment_mode, **fields)
    if status == Payment.Status.PROCESSING:
        return Payment.objects.get(pk=payment.pk)
    if status == Payment.Status.FAILED:
        return payment_mark_failed(payment_id=payment.pk, reason="declined (test)")
    return payment_mark_succeeded(payment_id=payment.pk, bank_rrn=new_rrn())


def make_refund(payment: Payment, *, amount: int, status: str = "INITIATED", **fields):
    """A refund row of `payment` in `status`, written as it stands (no rule checked, nothing sent
    to the bank: for tests of what a page or a sweep does with a given row), with the payment's
    refund totals moved as refunds' own writes move them (refunds.transitions.refund_totals_follow),
    under its lock. `payment`'s totals are brought up to date too."""
    with transaction.atomic():
        locked = lock_payment(payment.pk)
        fields.setdefault("merchant", locked.merchant)
        refund = Refund.objects.create(payment=locked, amount=amount, status=status, **fields)
        refund_totals_follow(locked, refund, before=None)
    payment.refunded_amount, payment.refund_pending_amount = locked.refunded_amount, locked.refund_pending_amount
    return refund


def make_success_payment(merchant, *, amount: int = 10_000, **kwargs) -> Payment:
    return make_payment(merchant, amount=amount, status=Payment.Status.SUCCESS, **kwargs)


def story_payment(merchant, *, refund_by: User | None = None, receiver=None,
                  phone: str = "9876543210", email: str = "Asha.Rao@Example.com") -> Payment:
    """A hosted card payment told by the real services, chapter by chapter: the session, the
    card (PROCESSING), the acquirer's 3-D Secure challenge and approval (SUCCESS), the redirect
    back to the merchant, its webhook (refused once by the merchant's receiver, a
    tests.support.receiver.Receiver, then delivered) and, when `refund_by` is given, a staff
    refund the sandbox bank processed, with its webhook."""
    session = hosted_payment_create(
        merchant=getattr(merchant, "merchant", merchant), merchant_txn_id=f"ORD-{next(_people)}-{time.time_ns()}",
        amount=149_900, currency="INR", return_url="https://merchant.example/return", customer_name="Asha Rao",
        customer_email=email, customer_phone=phone, description="Masala chai sampler")
    payment = hosted_card_pay(payment=session.payment, card=CardInput("4111111111111111", 8, timezone.now().year + 3,
                                                                      "123"))
    payment = hosted_card_verify_otp(payment=payment, otp="123456")
    hosted_redirect(Payment.objects.select_related("merchant").get(pk=payment.pk))
    if receiver is not None:
        receiver.respond_with(500, 200)
        delivery = WebhookDelivery.objects.get(event__subject_id=payment.sabpaisa_txn_id)
        delivery_attempt_run(delivery.pk)
        # The retry is due in 10 s by the schedule; the test does not wait for it.
        WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
        delivery_attempt_run(delivery.pk)
    if refund_by is not None:
        result = refund_create(merchant=payment.merchant, payment=Payment.objects.get(pk=payment.pk), amount=50_000,
                               reason="damaged in transit", refund_id=f"rfnd_story{time.time_ns()}",
                               source=Refund.Source.ADMIN, actor=refund_by)
        refund_process(result.refund.pk)
    return Payment.objects.select_related("merchant").get(pk=payment.pk)


# --- cards and tokens: paid through the real checkout views (Django's test client) ------------

VISA, MASTERCARD = "4111111111111111", "5555555555554444"
CONSENT_TEXT = "I agree to save my card with Chai Point Stores for faster checkout."
TOKENS_URL = "/api/v2/tokens"


def future_expiry(years: int = 3) -> tuple[int, int, str]:
    """(month, year, 'MM/YY') of a card valid for a few more years."""
    today = date.today()
    year = today.year + years
    return 8, year, f"08/{year % 100:02d}"


def enter(client: Client, session: dict) -> None:
    response = client.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")
    assert response.status_code == 303, response.content


def pay_by_card(client: Client, session: dict, *, number: str = VISA, cvv: str = "123", save_card: bool = True,
                otp: str | None = "123456", expiry: str | None = None) -> Payment:
    """The customer pays `session` by card on the checkout (Django's test client, the real
    views): card form, then the 3-D Secure OTP unless `otp` is None."""
    enter(client, session)
    pid = session["paymentId"]
    form = {"card_number": number, "card_expiry": expiry or future_expiry()[2], "card_cvv": cvv}
    if save_card:
        form["save_card"] = "1"
    response = client.post(f"/checkout/{pid}/card", form)
    assert response.status_code == 303, response.content
    if otp is not None:
        response = client.post(f"/checkout/{pid}/card/challenge", {"otp": otp})
        assert response.status_code == 303, response.content
    return Payment.objects.get(payment_id=pid)


def make_token(api, create_session, tm, **card) -> dict:
    """The creation response of a token of `tm`, made as in life: a checkout where the customer
    ticks save_card and passes 3-D Secure, then POST /api/v2/tokens."""
    payment = pay_by_card(Client(), create_session(tm), **card)
    assert payment.status == "SUCCESS", payment.failure_reason
    response = api.post(TOKENS_URL, token_request(payment.payment_id), format="json", **tm.headers)
    assert response.status_code == 200, response.content
    return response.json()


# --- request bodies -------------------------------------------------------------------------------

RETURN_URL = "http://merchant.test/shop/return"
_txn = itertools.count(1)


def _signed(tm: TestMerchant, body: dict, overrides: dict) -> dict:
    """`body` with `overrides` applied and the checksum computed over the result (pass
    checksum=... to override it too; a value of `...` drops the field)."""
    body.update({k: v for k, v in overrides.items() if k != "checksum"})
    body = {k: v for k, v in body.items() if v is not ...}
    if "checksum" in overrides:
        if overrides["checksum"] is not ...:
            body["checksum"] = overrides["checksum"]
    else:
        body["checksum"] = tm.checksum(body.get("merchantId"), body.get("merchantTxnId"), body.get("amount"),
                                       body.get("currency"), body.get("timestamp"))
    return body


def session_body(tm: TestMerchant, **overrides) -> dict:
    """A valid hosted session request (POST /api/v2/payments) of `tm` with `overrides` applied;
    the checksum is computed over the result unless `checksum=` is given. A value of `...`
    drops the field."""
    return _signed(tm, {
        "merchantId": tm.code,
        "merchantTxnId": f"ORD-{next(_txn)}-{now()}",
        "amount": 149900,
        "currency": "INR",
        "returnUrl": RETURN_URL,
        "customerName": "Asha Rao",
        "customerEmail": "asha@example.com",
        "customerPhone": "9876543210",
        "description": "Masala chai sampler, 3 x 250 g",
        "timestamp": now(),
    }, overrides)


def signed_body(tm: TestMerchant, **overrides) -> dict:
    """A valid S2S request (POST /api/v2/payments/s2s) of `tm`, with `overrides` applied and the
    checksum computed over the result (pass checksum=... to override it too; a value of `...`
    drops the field)."""
    return _signed(tm, {
        "merchantId": tm.code,
        "merchantTxnId": f"ORD-{next(_txn)}-{now()}",
        "amount": 12345,
        "currency": "INR",
        "customerName": "Asha Rao",
        "customerEmail": "asha@example.com",
        "customerPhone": "+91 98765 43210",
        "paymentMode": "UPI_QR",
        "timestamp": now(),
    }, overrides)


def refund_body(test_merchant, payment: Payment, *, sign: bool = False, **fields) -> dict:
    """A POST /api/v2/refunds body in the interface's names; `sign=True` adds the SDK's
    refundId-covering timestamp and checksum (a refundId is made up when none is given)."""
    body = {"merchantId": test_merchant.code, "sabpaisaTxnId": payment.sabpaisa_txn_id, **fields}
    if sign:
        body.setdefault("refundId", f"REF{time.time_ns()}")
        body["timestamp"] = int(time.time())
        body["checksum"] = compute_checksum(test_merchant.secret_key, body["merchantId"], body["sabpaisaTxnId"],
                                            body["refundId"], body["timestamp"])
    return {key: value for key, value in body.items() if value is not None}


def token_request(payment_id: str, *, given=True, timestamp=None, text=CONSENT_TEXT) -> dict:
    """A POST /api/v2/tokens body; `...` for a value drops the key."""
    consent = {"consentGiven": given, "consentTimestamp": now() if timestamp is None else timestamp,
               "consentText": text}
    return {"paymentId": payment_id, "consent": {k: v for k, v in consent.items() if v is not ...}}
