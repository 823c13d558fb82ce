"""`paidAmount` is rupees in enquiry (where the interface puts it); no payload reuses the name
for paise, so a merchant never reads one unit as the other."""
from datetime import timedelta

import pytest
from django.utils import timezone

from payments.models import Payment
from payments.payloads import hosted_payload, s2s_payload
from payments.services.transitions import payment_mark_processing, payment_mark_succeeded
from tests.support.factories import make_merchant


@pytest.mark.parametrize("flow", [Payment.Flow.HOSTED, Payment.Flow.S2S])
def test_payment_payloads_carry_paid_amount_in_paise_under_a_name_that_says_so(db, flow):
    shop = make_merchant(code=f"UNITS{flow}")
    payment = Payment.objects.create(
        merchant=shop.merchant, flow=flow, merchant_txn_id="U-1", amount=199_900, status=Payment.Status.PENDING,
        s2s_mode="UPI_QR" if flow == Payment.Flow.S2S else "", expires_at=timezone.now() + timedelta(minutes=5))
    payment_mark_processing(payment_id=payment.pk, payment_mode="UPI")
    payment = payment_mark_succeeded(payment_id=payment.pk, bank_rrn="123456789012")
    payload = s2s_payload(payment) if flow == Payment.Flow.S2S else hosted_payload(payment)
    assert "paidAmount" not in payload
    paid = payload["paidAmountPaise"] if flow == Payment.Flow.S2S else payload["paid_amount"]
    assert paid == 199_900 == payload["amount"]
