"""A function whose docstring says "call it outside any transaction" checks it: upi_pay calls
the acquirer with no lock held and records its answer in transactions of its own, so inside a
caller's transaction it refuses before doing anything."""
import pytest
from django.db import transaction

from payments.models import Payment, PaymentEvent
from payments.services.upi import upi_link, upi_pay, upi_pay_link
from tests.support.factories import signed_body


@pytest.fixture
def s2s_payment(s2s_merchant, post):
    response = post(s2s_merchant, signed_body(s2s_merchant))
    assert response.status_code == 201, response.json()
    return Payment.objects.get(payment_id=response.json()["paymentId"])


@pytest.mark.parametrize("pay", [
    lambda payment: upi_pay(payment_id=payment.pk, payer_vpa="success@sandbox"),
    lambda payment: upi_pay_link(upi_uri=upi_link(payment), payer_vpa="success@sandbox"),
], ids=["upi_pay", "upi_pay_link"])
def test_upi_pay_inside_a_transaction_is_refused_and_changes_nothing(s2s_payment, pay):
    events = PaymentEvent.objects.filter(payment=s2s_payment).count()
    with transaction.atomic(), pytest.raises(RuntimeError, match="outside any transaction"):
        pay(s2s_payment)
    s2s_payment.refresh_from_db()
    assert (s2s_payment.status, s2s_payment.payer_vpa) == ("PROCESSING", "")
    assert PaymentEvent.objects.filter(payment=s2s_payment).count() == events


def test_upi_pay_outside_a_transaction_goes_ahead(s2s_payment):
    assert upi_pay(payment_id=s2s_payment.pk, payer_vpa="success@sandbox").payer_vpa == "success@sandbox"
