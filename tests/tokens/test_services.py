"""The token services on their own: the network simulator, the consent purge, races."""
from __future__ import annotations

import re
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from payments.models import Payment
from payments.services.card_tokens import payment_token_create
from tests.support.factories import pay_by_card, token_request
from tokens import services
from tokens.models import CardConsent, SandboxNetworkToken, Token
from tokens.network import SandboxCardNetwork


@pytest.mark.django_db
def test_the_network_simulator_keeps_no_card_number_and_declines_deleted_tokens():
    network = SandboxCardNetwork()
    issued = network.provision(network="VISA", last4="1111", issuer="Sandbox Bank of India",
                               authentication_reference="418203775561")
    record = SandboxNetworkToken.objects.get(reference=issued.reference)
    assert {f.name for f in SandboxNetworkToken._meta.fields} == {
        "id", "reference", "network", "last4", "issuer", "status", "created_at", "deleted_at"}
    assert record.last4 == "1111" and not re.search(r"\d{13}", issued.reference)
    assert network.authorize(reference=issued.reference, cvv="123", amount=100).outcome == "challenge"
    answer = network.authorize(reference=issued.reference, cvv="", amount=100)
    assert answer.outcome == "declined"
    network.delete(reference=issued.reference)
    network.delete(reference=issued.reference)  # twice is fine
    assert network.authorize(reference=issued.reference, cvv="123", amount=100).outcome == "declined"
    assert network.authorize(reference="NTR-VISA-UNKNOWN", cvv="123", amount=100).outcome == "declined"
    with pytest.raises(Exception):
        network.provision(network="VISA", last4="1111", issuer="x", authentication_reference="")


@pytest.mark.django_db
def test_the_purge_forgets_the_expiry_of_consents_that_cannot_become_tokens(create_session, shop):
    succeeded = pay_by_card(Client(), create_session(shop))
    failed = pay_by_card(Client(), create_session(shop), otp="000000")
    waiting = pay_by_card(Client(), create_session(shop), otp=None)
    old = pay_by_card(Client(), create_session(shop))
    Payment.objects.filter(pk=old.pk).update(completed_at=timezone.now() - services.TOKEN_CONSENT_WINDOW
                                             - timedelta(seconds=1))

    assert services.card_consents_purge() == 2

    def expiry(payment):
        consent = CardConsent.objects.get(payment=payment)
        assert consent.text and consent.given_at  # the record stays
        return consent.expiry_month

    assert expiry(succeeded) is not None and expiry(waiting) is not None
    assert expiry(failed) is None and expiry(old) is None
    assert services.card_consents_purge() == 0


def test_the_statuses_whose_consents_are_purged_are_payment_statuses():
    # tokens names them without importing payments; a renamed status must not pass unnoticed.
    assert set(services.PAYMENT_STATUSES_WITHOUT_TOKEN) == {
        Payment.Status.FAILED, Payment.Status.EXPIRED, Payment.Status.PENDING}


@pytest.mark.django_db(transaction=True)
def test_two_requests_for_the_same_payments_token_at_once_make_one_token(create_session, shop):
    payment = pay_by_card(Client(), create_session(shop))
    body = token_request(payment.payment_id)
    barrier = threading.Barrier(2)
    results, errors = [], []

    def create():
        try:
            barrier.wait(timeout=10)
            results.append(payment_token_create(
                merchant=shop.merchant, payment_id=payment.payment_id, consent_given=True,
                consent_timestamp=body["consent"]["consentTimestamp"], consent_text="I agree"))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=create) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert errors == []
    assert len({outcome.token.token_id for outcome in results}) == 1
    assert sorted(outcome.created for outcome in results) == [False, True]
    assert Token.objects.count() == 1
    # The losing request's network reference was handed back.
    assert SandboxNetworkToken.objects.filter(status="ACTIVE").count() == 1
    assert SandboxNetworkToken.objects.get(status="ACTIVE").reference == Token.objects.get().network_reference
