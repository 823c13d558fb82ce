"""X-Idempotency-Key on POST /api/v2/payments: S2S's semantics through the same mechanism
(payments.services.idempotency), with the clientSecret kept encrypted for the replay."""
from __future__ import annotations

import hashlib

import pytest

from payments.models import IdempotencyRecord, Payment
from tests.payments.hosted.conftest import URL
from tests.support.factories import make_merchant, now, session_body

pytestmark = pytest.mark.django_db


def post(api, tm, body, key=None):
    headers = {"HTTP_X_API_KEY": tm.api_key}
    if key is not None:
        headers["HTTP_X_IDEMPOTENCY_KEY"] = key
    return api.post(URL, body, format="json", **headers)


def resign(tm, body: dict, **changes) -> dict:
    body = {k: v for k, v in {**body, **changes}.items() if k != "checksum"}
    return session_body(tm, **body)


def test_the_same_key_and_body_answers_the_original_session_and_opens_no_other(api, shop):
    body = session_body(shop)
    first = post(api, shop, body, key="order-1")
    retry = post(api, shop, resign(shop, body, timestamp=now()), key="order-1")
    assert first.status_code == retry.status_code == 200
    assert retry.json() == first.json()  # the clientSecret and traceId included
    assert retry["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first
    assert Payment.objects.count() == 1
    payment = Payment.objects.get()
    assert payment.client_secret_hash == hashlib.sha256(retry.json()["clientSecret"].encode()).hexdigest()


def test_the_stored_response_keeps_the_client_secret_encrypted(api, shop):
    secret = post(api, shop, session_body(shop), key="k").json()["clientSecret"]
    stored = IdempotencyRecord.objects.get()
    assert stored.payment == Payment.objects.get()
    assert secret not in str(stored.response_body) and "clientSecret" not in stored.response_body


@pytest.mark.parametrize("change", [{"amount": 149901}, {"returnUrl": "http://merchant.test/other"},
                                    {"udf2": "x"}, {"metadata": {"a": 1}}])
def test_the_same_key_with_another_body_is_idempotency_mismatch(api, shop, change):
    body = session_body(shop)
    assert post(api, shop, body, key="k").status_code == 200
    response = post(api, shop, resign(shop, body, **change), key="k")
    assert response.status_code == 400 and response.json()["errorCode"] == "IDEMPOTENCY_MISMATCH"
    assert Payment.objects.count() == 1


def test_another_key_with_a_used_merchant_txn_id_is_duplicate_and_gives_its_key_back(api, shop):
    body = session_body(shop)
    assert post(api, shop, body, key="a").status_code == 200
    duplicate = post(api, shop, resign(shop, body), key="b")
    assert duplicate.json()["errorCode"] == "DUPLICATE_TRANSACTION"
    assert not IdempotencyRecord.objects.filter(key="b").exists()
    assert post(api, shop, session_body(shop), key="b").status_code == 200


def test_keys_belong_to_one_merchant(api, shop):
    other = make_merchant()
    assert post(api, shop, session_body(shop), key="shared").status_code == 200
    assert post(api, other, session_body(other), key="shared").status_code == 200
    assert Payment.objects.count() == 2


def test_a_bad_key_is_a_validation_error_naming_the_header(api, shop):
    response = post(api, shop, session_body(shop), key="has space")
    assert response.status_code == 400
    assert response.json()["errorMessage"].startswith("X-Idempotency-Key")
    assert Payment.objects.count() == 0


def test_without_a_key_two_requests_are_two_decisions(api, shop):
    body = session_body(shop)
    assert post(api, shop, body).status_code == 200
    assert post(api, shop, resign(shop, body)).json()["errorCode"] == "DUPLICATE_TRANSACTION"
    assert IdempotencyRecord.objects.count() == 0


def test_reencrypt_secrets_moves_the_kept_client_secret_to_the_new_key(api, shop, settings):
    from io import StringIO

    from cryptography.fernet import Fernet
    from django.core.management import call_command

    default = list(settings.GATEWAY_ENCRYPTION_KEYS)  # the merchant's secrets are under these
    old_key, new_key = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    body = session_body(shop)
    settings.GATEWAY_ENCRYPTION_KEYS = [old_key, *default]
    first = post(api, shop, body, key="rot").json()
    settings.GATEWAY_ENCRYPTION_KEYS = [new_key, old_key, *default]
    out = StringIO()
    call_command("reencrypt_secrets", stdout=out)
    assert "re-encrypted 1 checkout session secret" in out.getvalue()
    settings.GATEWAY_ENCRYPTION_KEYS = [new_key]  # the old keys retired
    assert post(api, shop, resign(shop, body), key="rot").json() == first


def test_a_kept_secret_no_key_reads_is_a_clear_error_not_a_500(api, shop, settings):
    from cryptography.fernet import Fernet

    default = list(settings.GATEWAY_ENCRYPTION_KEYS)
    body = session_body(shop)
    settings.GATEWAY_ENCRYPTION_KEYS = [Fernet.generate_key().decode(), *default]
    post(api, shop, body, key="lost")
    settings.GATEWAY_ENCRYPTION_KEYS = default  # retired without reencrypt_secrets
    response = post(api, shop, resign(shop, body), key="lost")
    assert response.status_code == 400 and response.json()["errorCode"] == "PROCESSING_ERROR"
    assert "X-Idempotency-Key" in response.json()["errorMessage"]
