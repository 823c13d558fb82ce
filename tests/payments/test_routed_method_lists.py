"""Issue 33: the checkout lists the banks and wallets of the acquirer the payment's method would
be routed to (payments.services.acquirer_methods.method_choices), not the configured one's, and
accepts only those. Cashfree is configured, Razorpay enabled beside it; both are their stateful
doubles on loopback. Razorpay carries no Paytm wallet, Cashfree does."""
from __future__ import annotations

import pytest
from django.test import Client

from payments.models import AcquirerRoute, Payment
from payments.services.acquirer_methods import method_choices
from tests.acquirer_cashfree.double import cashfree_double  # noqa: F401 - a fixture
from tests.acquirer_razorpay.double import razorpay_double  # noqa: F401 - a fixture
from tests.support.two_acquirers import both  # noqa: F401 - a fixture
from tests.payments.hosted.conftest import create_session  # noqa: F401 - a fixture
from tests.payments.s2s.conftest import s2s_merchant  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db



@pytest.fixture
def customer(both, create_session, s2s_merchant):  # noqa: F811
    session = create_session(s2s_merchant, amount=25000, customerPhone="9876543210")
    browser = Client()
    browser.get(f"/checkout/{session['paymentId']}?clientSecret={session['clientSecret']}")
    browser.payment = Payment.objects.get(payment_id=session["paymentId"])
    return browser


def wallets_on_page(customer) -> str:
    return customer.get(f"/checkout/{customer.payment.payment_id}").content.decode()


def test_without_a_route_the_configured_acquirers_wallets_are_listed(customer):
    assert "PAYTM" in method_choices(customer.payment, "WALLET")
    assert 'value="PAYTM"' in wallets_on_page(customer)


def test_wallets_routed_to_razorpay_list_razorpays_wallets_and_refuse_another(customer, both):
    cashfree, razorpay = both
    AcquirerRoute.objects.create(merchant_id=customer.payment.merchant_id, method="WALLET",
                                 acquirers="razorpay,cashfree")
    assert method_choices(customer.payment, "WALLET") == {"PHONEPE": "PhonePe", "AMAZONPAY": "Amazon Pay",
                                                          "MOBIKWIK": "MobiKwik"}
    assert method_choices(customer.payment, "NB")["PUNB"] == "Punjab National Bank"  # NB: no route, Cashfree's
    html = wallets_on_page(customer)
    assert 'value="PAYTM"' not in html and 'value="MOBIKWIK"' in html
    # Paytm, which the page no longer lists, is refused by the form: nothing reaches either acquirer.
    response = customer.post(f"/checkout/{customer.payment.payment_id}/wallet", {"wallet": "PAYTM"})
    assert response.status_code == 200 and "Choose a wallet." in response.content.decode()
    assert not [c for c in razorpay.calls if c.path.startswith("/v1/payments")]
    customer.payment.refresh_from_db()
    assert customer.payment.status == Payment.Status.PENDING


def test_a_routed_payment_lists_its_own_acquirers_wallets_whatever_the_route(customer):
    AcquirerRoute.objects.create(merchant_id=customer.payment.merchant_id, method="WALLET", acquirers="razorpay")
    Payment.objects.filter(pk=customer.payment.pk).update(acquirer="cashfree")  # an earlier attempt went there
    customer.payment.refresh_from_db()
    assert "PAYTM" in method_choices(customer.payment, "WALLET")
