"""How the contract test (test_contract.py) drives each acquirer of the table: one harness per
row of payments.acquirer.IMPLEMENTATIONS. A new acquirer adds its package, its row, its docs page
and a harness here; the contract then says what it is missing.

A harness arranges what only the acquirer's own world can (its processor's answer, a delivery it
signs); every check is the contract's."""
from __future__ import annotations

import json
import socket
import time

from django.utils.module_loading import import_string

from payments.acquirer import IMPLEMENTATIONS
from payments.cards import CardInput
from payments.models import Payment


class SandboxHarness:
    name = "sandbox"
    card = CardInput(number="4111111111111111", expiry_month=12, expiry_year=2030, cvv="123")
    pending_vpa = "success@sandbox"

    def __init__(self, request):
        request.getfixturevalue("settings").GATEWAY_ACQUIRER = self.name

    def acquirer(self):
        return import_string(IMPLEMENTATIONS[self.name].adapter)()

    def settle_card(self, payment: Payment, challenge_ref: str, *, approved: bool) -> str:
        """Arrange the processor's word on the challenge; the OTP the customer then gives."""
        return "123456" if approved else "000000"

    def unreachable(self, payment: Payment):
        """An acquirer and a payment whose registration finds the processor unreachable."""
        Payment.objects.filter(pk=payment.pk).update(amount=100002)  # the sandbox's "unavailable" amount
        payment.refresh_from_db()
        return self.acquirer(), payment

    def delivery(self, payment: Payment, answer) -> tuple[dict, bytes]:
        from payments.acquirer.sandbox.notices import notice_signed

        return notice_signed({"type": "payment", "order": payment.sabpaisa_txn_id, "status": "APPROVED",
                              "reference": answer.reference, "amount": payment.amount})


    def pay_out(self, payment: Payment) -> None:
        """The acquirer pays out what it approved (the sandbox: T+1, from our payment rows)."""
        from django.utils import timezone

        from payments.acquirer.sandbox import settlements

        Payment.objects.filter(pk=payment.pk).update(status=Payment.Status.SUCCESS, completed_at=timezone.now())
        settlements.payouts_make(timezone.now().astimezone(settlements.IST).date())


class CashfreeHarness:
    name = "cashfree"
    card = CardInput(number="4111111111111111", expiry_month=12, expiry_year=2030, cvv="123")
    pending_vpa = "asha@okbank"

    def __init__(self, request):
        self.double = request.getfixturevalue("cashfree_double")

    def acquirer(self):
        return import_string(IMPLEMENTATIONS[self.name].adapter)()

    def settle_card(self, payment: Payment, challenge_ref: str, *, approved: bool) -> str:
        self.double.settle_payment(payment.sabpaisa_txn_id, "SUCCESS" if approved else "FAILED", notify=False)
        return ""  # Cashfree's issuer page took it; the gateway never sees an OTP

    def pay_in_card_fields(self, payment: Payment, session: str, *, approved: bool) -> None:
        """What Cashfree.js does in the customer's browser with `session`: order pay by card,
        straight to Cashfree; then the issuer's page decides."""
        import http.client
        from urllib.parse import urlsplit

        body = json.dumps({"payment_session_id": session, "payment_method": {"card": {
            "channel": "link", "card_number": self.card.number, "card_expiry_mm": "12", "card_expiry_yy": "30",
            "card_cvv": self.card.cvv}}})
        parts = urlsplit(self.double.base_url)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        try:
            connection.request("POST", parts.path + "/orders/sessions", body=body,
                               headers={"Content-Type": "application/json", "x-api-version": "2025-01-01"})
            assert connection.getresponse().status == 200
        finally:
            connection.close()
        self.double.settle_payment(payment.sabpaisa_txn_id, "SUCCESS" if approved else "FAILED", notify=False)

    def pay_out(self, payment: Payment) -> None:
        self.double.settle()

    def unreachable(self, payment: Payment):
        from payments.acquirer.cashfree.acquirer import CashfreeAcquirer
        from payments.acquirer.cashfree.client import CashfreeClient

        with socket.socket() as probe:  # a port nobody listens on
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        client = CashfreeClient(base_url=f"http://127.0.0.1:{port}/pg", client_id="x", client_secret="y", timeout=1)
        return CashfreeAcquirer(client), payment

    def delivery(self, payment: Payment, answer) -> tuple[dict, bytes]:
        from tests.acquirer_cashfree.double import CLIENT_SECRET, sign

        entity = self.double.newest_payment(payment.sabpaisa_txn_id)
        body = json.dumps(self.double.payment_webhook(payment.sabpaisa_txn_id, entity),
                          separators=(",", ":")).encode()
        timestamp = str(int(time.time() * 1000))
        return {"x-webhook-timestamp": timestamp, "x-webhook-signature": sign(CLIENT_SECRET, timestamp, body)}, body


class RazorpayHarness:
    name = "razorpay"
    card = CardInput(number="4111111111111111", expiry_month=12, expiry_year=2030, cvv="123")
    pending_vpa = "asha@okbank"

    def __init__(self, request):
        self.double = request.getfixturevalue("razorpay_double")

    def acquirer(self):
        return import_string(IMPLEMENTATIONS[self.name].adapter)()

    def settle_card(self, payment: Payment, challenge_ref: str, *, approved: bool) -> str:
        self.double.settle_payment(payment.sabpaisa_txn_id, "captured" if approved else "failed",
                                   payment_id=challenge_ref, notify=False)
        return ""  # Razorpay's issuer page took it; the gateway never sees an OTP

    def pay_in_card_fields(self, payment: Payment, session: str, *, approved: bool) -> None:
        """What Razorpay's checkout frame does in the customer's browser with the order id
        `session`: the card payment, straight to Razorpay, then the issuer's OTP."""
        from tests.acquirer_razorpay.double import CARD_OTP

        status, _ = self.double.pay_in_checkout(session, number=self.card.number,
                                                otp=CARD_OTP if approved else "000000")
        assert status == (200 if approved else 400)

    def pay_out(self, payment: Payment) -> None:
        self.double.settle()

    def unreachable(self, payment: Payment):
        from payments.acquirer.razorpay.acquirer import RazorpayAcquirer
        from payments.acquirer.razorpay.client import RazorpayClient

        with socket.socket() as probe:  # a port nobody listens on
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        client = RazorpayClient(base_url=f"http://127.0.0.1:{port}/v1", key_id="x", key_secret="y", timeout=1)
        return RazorpayAcquirer(client), payment

    def delivery(self, payment: Payment, answer) -> tuple[dict, bytes]:
        entity = self.double.newest_payment(payment.sabpaisa_txn_id)
        return self.double.signed(self.double.payment_webhook(entity, "payment.captured"))


HARNESSES = {harness.name: harness for harness in (SandboxHarness, CashfreeHarness, RazorpayHarness)}
