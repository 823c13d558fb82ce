"""API keys: stored only as a hash, found by prefix, refused when wrong, expired or the
merchant is inactive; X-Merchant-Id and merchantId must name the key's merchant."""
from datetime import timedelta

import pytest
from django.utils import timezone

from gateway.core import crypto
from gateway.platform.auth import merchant_for_api_key
from gateway.platform.models import ApiKey
from gateway.platform.services import merchant_rotate_api_key
from tests.support.factories import make_merchant

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.gateway.urls")]


def _get(api, path, key=None, merchant_id=None):
    headers = {}
    if key is not None:
        headers["HTTP_X_API_KEY"] = key
    if merchant_id is not None:
        headers["HTTP_X_MERCHANT_ID"] = merchant_id
    return api.get(path, **headers)


def assert_unauthorized(response):
    assert response.status_code == 401, response.content
    body = response.json()
    assert body["success"] is False
    assert body["errorCode"] == "UNAUTHORIZED"
    assert body["traceId"] == response["X-Trace-Id"]


def test_api_key_is_stored_only_as_a_keyed_hash_found_by_its_prefix(acme):
    key = ApiKey.objects.get(merchant=acme.merchant)
    assert key.prefix == acme.api_key[: ApiKey.PREFIX_LENGTH]
    assert key.key_hash == crypto.hash_api_key(acme.api_key)
    assert acme.api_key not in key.key_hash
    row = ApiKey.objects.filter(pk=key.pk).values().get()
    assert acme.api_key not in str(row)
    assert merchant_for_api_key(acme.api_key) == acme.merchant


def test_api_key_format_is_prefixed_and_url_safe(acme):
    assert acme.api_key.startswith("gwk_")
    assert len(acme.api_key) == 4 + 32
    assert all(c.isalnum() or c in "_-" for c in acme.api_key)


def test_right_key_authenticates_and_names_its_merchant(api, acme):
    response = _get(api, "/t/whoami", acme.api_key)
    assert response.status_code == 200
    assert response.json() == {"merchantId": "ACME"}


@pytest.mark.parametrize("mangle", [
    pytest.param(lambda k: k[:-1] + ("A" if k[-1] != "A" else "B"), id="same-prefix-wrong-tail"),
    pytest.param(lambda k: "gwk_" + "x" * 32, id="unknown-prefix"),
    pytest.param(lambda k: k[:10], id="shorter-than-prefix"),
    pytest.param(lambda k: "", id="empty"),
    pytest.param(lambda k: k + "x" * 300, id="absurdly-long"),
    pytest.param(lambda k: k.upper(), id="case-changed"),
])
def test_wrong_api_key_is_unauthorized(api, acme, mangle):
    assert_unauthorized(_get(api, "/t/whoami", mangle(acme.api_key)))


def test_missing_api_key_is_unauthorized(api, acme):
    assert_unauthorized(_get(api, "/t/whoami"))


def test_key_of_inactive_merchant_is_unauthorized(api, acme):
    acme.merchant.is_active = False
    acme.merchant.save()
    assert_unauthorized(_get(api, "/t/whoami", acme.api_key))


def test_rotated_key_keeps_working_during_its_grace_period_and_not_after(api, acme):
    new_key = merchant_rotate_api_key(merchant=acme.merchant, grace_seconds=3600)
    assert _get(api, "/t/whoami", acme.api_key).status_code == 200
    assert _get(api, "/t/whoami", new_key).status_code == 200

    old = ApiKey.objects.get(prefix=acme.api_key[: ApiKey.PREFIX_LENGTH])
    assert old.expires_at == pytest.approx(timezone.now() + timedelta(hours=1), abs=timedelta(minutes=1))
    assert old.is_valid(timezone.now() + timedelta(minutes=59))
    assert not old.is_valid(timezone.now() + timedelta(minutes=61))

    # The grace period ends: the stored expiry passes.
    old.expires_at = timezone.now() - timedelta(seconds=1)
    old.save()
    assert_unauthorized(_get(api, "/t/whoami", acme.api_key))
    assert _get(api, "/t/whoami", new_key).status_code == 200


def test_rotation_without_grace_revokes_the_old_key_at_once(api, acme):
    new_key = merchant_rotate_api_key(merchant=acme.merchant, grace_seconds=0)
    assert_unauthorized(_get(api, "/t/whoami", acme.api_key))
    assert _get(api, "/t/whoami", new_key).status_code == 200


def test_a_second_rotation_never_extends_an_earlier_grace_period(acme):
    merchant_rotate_api_key(merchant=acme.merchant, grace_seconds=60)
    merchant_rotate_api_key(merchant=acme.merchant, grace_seconds=7200)
    first = ApiKey.objects.get(prefix=acme.api_key[: ApiKey.PREFIX_LENGTH])
    assert first.expires_at < timezone.now() + timedelta(seconds=61)


# --- X-Merchant-Id and merchantId ------------------------------------------------------------

def test_merchant_header_naming_the_keys_merchant_is_accepted(api, acme):
    assert _get(api, "/t/merchant-header", acme.api_key, "ACME").status_code == 200


def test_required_merchant_header_missing_is_unauthorized(api, acme):
    assert_unauthorized(_get(api, "/t/merchant-header", acme.api_key))


def test_missing_merchant_header_answers_the_same_for_a_wrong_key(api, acme):
    """The answer must not tell a caller whether the key it guessed was right."""
    right = _get(api, "/t/merchant-header", acme.api_key).json()
    wrong = _get(api, "/t/merchant-header", "gwk_" + "x" * 32).json()
    assert right["errorMessage"] == wrong["errorMessage"]


@pytest.mark.parametrize("path", ["/t/merchant-header", "/t/whoami"])
def test_merchant_header_of_another_merchant_is_unauthorized(api, acme, other_merchant, path):
    assert_unauthorized(_get(api, path, acme.api_key, other_merchant.code))


def test_merchant_header_is_case_sensitive(api, acme):
    assert_unauthorized(_get(api, "/t/merchant-header", acme.api_key, "acme"))


def test_merchant_id_query_parameter_of_another_merchant_is_unauthorized(api, acme, other_merchant):
    assert _get(api, "/t/whoami?merchantId=ACME", acme.api_key).status_code == 200
    assert_unauthorized(_get(api, f"/t/whoami?merchantId={other_merchant.code}", acme.api_key))


def test_merchant_id_in_body_of_another_merchant_is_unauthorized(api, acme, other_merchant):
    from tests.gateway.test_signing import signed_body

    body = signed_body(acme, merchantId=other_merchant.code)
    response = api.post("/t/signed", body, format="json", HTTP_X_API_KEY=acme.api_key)
    assert_unauthorized(response)


def test_keys_of_two_merchants_each_name_their_own(api, acme):
    other = make_merchant(code="SECOND")
    assert _get(api, "/t/whoami", other.api_key).json() == {"merchantId": "SECOND"}
    assert _get(api, "/t/whoami", acme.api_key).json() == {"merchantId": "ACME"}
