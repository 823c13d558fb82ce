"""A refund goes back by the payment's original method, and the record says which."""
import pytest

from payments.models import Payment
from refunds.services import refund_create
from tests.support.factories import make_success_payment

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("mode,fields,method", [
    (Payment.Mode.CARD, {"card_last4": "1234", "card_network": "VISA"}, "original card ****1234"),
    (Payment.Mode.UPI, {"payer_vpa": "asha@okbank"}, "original UPI account asha@okbank"),
    (Payment.Mode.NB, {"bank_code": "HDFC"}, "original bank account (net banking, HDFC)"),
    (Payment.Mode.WALLET, {"bank_code": "PAYTM"}, "original wallet (PAYTM)"),
    (Payment.Mode.NEFT, {}, "remitting bank account (NEFT)"),
    (Payment.Mode.CHALLAN, {}, "payer's bank account (paid by cash challan)"),
])
def test_refund_records_the_original_method(merchant, mode, fields, method):
    payment = make_success_payment(merchant, payment_mode=mode, **fields)
    refund = refund_create(merchant=merchant.merchant, payment=payment, amount=500).refund
    assert (refund.payment_mode, refund.refund_method) == (mode, method)
