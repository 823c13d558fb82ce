"""The acquirer is a seam: the services ask the Acquirer protocol, never which acquirer it is.
An acquirer built on RealAcquirer's defaults (as Cashfree's will be) pays a UPI link from any
VPA, and nothing of the sandbox's (its test VPAs, its payer's approval, its sweep) happens."""
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from payments.acquirer.base import AcquirerAnswer, Outcome, RealAcquirer
from payments.acquirer.sandbox.acquirer import SandboxAcquirer
from payments.models import Payment, PaymentEvent
from payments.sandbox_upi.approvals import upi_sandbox_approvals_due
from payments.services.upi import upi_link, upi_pay_link
from tests.payments.hosted.doubles import use_acquirer
from tests.support.factories import signed_body

ROOT = Path(__file__).resolve().parents[3]


class BankAcquirer(RealAcquirer, SandboxAcquirer):
    """A real acquirer's UPI behaviour (RealAcquirer's defaults first); the sandbox's answers
    stand in for its other calls."""

    name = "bank"

    def upi_pay(self, *, payment, payer_vpa, return_url=""):
        return AcquirerAnswer(Outcome.PENDING, raw={"vpa": payer_vpa, "result": "awaiting approval"})


@pytest.fixture
def s2s_payment(s2s_merchant, post):
    response = post(s2s_merchant, signed_body(s2s_merchant))
    assert response.status_code == 201, response.json()
    return Payment.objects.get(payment_id=response.json()["paymentId"])


def test_a_real_acquirer_takes_any_vpa_and_leaves_the_answer_to_its_callback(monkeypatch, s2s_payment):
    use_acquirer(monkeypatch, BankAcquirer())
    deadline = s2s_payment.expires_at
    paid = upi_pay_link(upi_uri=upi_link(s2s_payment), payer_vpa="Alice.42@okbank")
    assert (paid.status, paid.payer_vpa) == ("PROCESSING", "alice.42@okbank")
    assert paid.expires_at == deadline  # no sandbox approval window, no timeout@sandbox deadline
    assert PaymentEvent.objects.filter(payment=paid, detail__step="upi_pay", detail__outcome="pending").exists()
    # The sandbox's payer's bank approves only what it was sent (success@sandbox), even in the
    # payments sweep; a real acquirer's PENDING request is left to its notice or status query.
    assert upi_sandbox_approvals_due(now=timezone.now() + timedelta(minutes=5)) == 0
    paid.refresh_from_db()
    assert paid.status == "PROCESSING"


def test_the_sandbox_refuses_a_vpa_that_is_not_one_of_its_test_vpas():
    with pytest.raises(ValueError, match="not a sandbox test VPA"):
        SandboxAcquirer().upi_vpa_check("alice@okbank")
    assert SandboxAcquirer().upi_vpa_check("success@upi") == "success@sandbox"


def test_no_code_outside_the_sandbox_acquirer_asks_for_the_sandbox_by_name():
    asks = re.compile(r"""\.name\s*[!=]=\s*["']sandbox["']""")
    found = [f"{path.relative_to(ROOT)}:{number}"
             for package in ("payments", "refunds", "tokens", "webhooks", "gateway")
             for path in sorted((ROOT / package).rglob("*.py"))
             if path.parent != ROOT / "payments/acquirer/sandbox"
             for number, line in enumerate(path.read_text().splitlines(), 1) if asks.search(line)]
    assert found == []
