"""Merchant secrets at rest: Fernet under GATEWAY_ENCRYPTION_KEYS (first encrypts, all
decrypt) and `manage.py reencrypt_secrets` moving everything to the newest key."""
from io import StringIO

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command
from django.test import override_settings

from gateway.core import crypto
from gateway.platform.models import AuditRecord, Merchant
from tests.support.factories import make_merchant

pytestmark = pytest.mark.django_db

OLD_KEY = Fernet.generate_key().decode()
NEW_KEY = Fernet.generate_key().decode()


def test_encrypt_decrypt_round_trip():
    token = crypto.encrypt("gws_secret value é")
    assert token != "gws_secret value é"
    assert crypto.decrypt(token) == "gws_secret value é"


def test_the_same_plaintext_encrypts_differently_each_time():
    assert crypto.encrypt("same") != crypto.encrypt("same")


def test_secrets_are_stored_encrypted_and_read_back_decrypted():
    m = make_merchant(code="ENC")
    row = Merchant.objects.filter(pk=m.merchant.pk).values().get()
    assert m.secret_key not in str(row)
    assert m.webhook_secret not in str(row)
    fresh = Merchant.objects.get(pk=m.merchant.pk)
    assert fresh.secret_key == m.secret_key
    assert fresh.webhook_secret == m.webhook_secret


def test_first_key_encrypts_and_every_key_decrypts():
    with override_settings(GATEWAY_ENCRYPTION_KEYS=[OLD_KEY]):
        token = crypto.encrypt("s3cret")
    with override_settings(GATEWAY_ENCRYPTION_KEYS=[NEW_KEY, OLD_KEY]):
        assert crypto.decrypt(token) == "s3cret"
        assert not crypto.is_current(token)
        assert crypto.is_current(crypto.encrypt("s3cret"))
    with override_settings(GATEWAY_ENCRYPTION_KEYS=[NEW_KEY]):
        with pytest.raises(RuntimeError, match="GATEWAY_ENCRYPTION_KEYS"):
            crypto.decrypt(token)


def test_key_rotation_with_reencrypt_secrets_then_removing_the_old_key():
    with override_settings(GATEWAY_ENCRYPTION_KEYS=[OLD_KEY]):
        a = make_merchant(code="ROT_A")
        b = make_merchant(code="ROT_B")

    with override_settings(GATEWAY_ENCRYPTION_KEYS=[NEW_KEY, OLD_KEY]):
        # Both keys configured: everything still reads before re-encryption.
        assert Merchant.objects.get(code="ROT_A").secret_key == a.secret_key
        out = StringIO()
        call_command("reencrypt_secrets", stdout=out)
        assert "2 merchant" in out.getvalue()
        # Running it again finds nothing left to do.
        out = StringIO()
        call_command("reencrypt_secrets", stdout=out)
        assert "0 merchant" in out.getvalue()

    with override_settings(GATEWAY_ENCRYPTION_KEYS=[NEW_KEY]):
        for tm in (a, b):
            fresh = Merchant.objects.get(pk=tm.merchant.pk)
            assert fresh.secret_key == tm.secret_key
            assert fresh.webhook_secret == tm.webhook_secret
            assert crypto.is_current(fresh.secret_key_encrypted)


def test_reencrypt_secrets_is_audited_without_secrets():
    with override_settings(GATEWAY_ENCRYPTION_KEYS=[OLD_KEY]):
        m = make_merchant(code="ROT_AUD")
    with override_settings(GATEWAY_ENCRYPTION_KEYS=[NEW_KEY, OLD_KEY]):
        call_command("reencrypt_secrets", stdout=StringIO())
    record = AuditRecord.objects.filter(merchant=m.merchant, action="merchant.reencrypt_secrets").get()
    dumped = str(record.before) + str(record.after)
    assert m.secret_key not in dumped and m.webhook_secret not in dumped


def test_reencrypt_secrets_reports_merchants_it_cannot_decrypt_and_still_moves_the_others():
    lost_key = Fernet.generate_key().decode()
    with override_settings(GATEWAY_ENCRYPTION_KEYS=[lost_key]):
        make_merchant(code="ROT_LOST")
    with override_settings(GATEWAY_ENCRYPTION_KEYS=[OLD_KEY]):
        kept = make_merchant(code="ROT_KEPT")
    with override_settings(GATEWAY_ENCRYPTION_KEYS=[NEW_KEY, OLD_KEY]):
        with pytest.raises(CommandError, match="ROT_LOST"):
            call_command("reencrypt_secrets", stdout=StringIO())
        assert crypto.is_current(Merchant.objects.get(code="ROT_KEPT").secret_key_encrypted)
        assert Merchant.objects.get(code="ROT_KEPT").secret_key == kept.secret_key


def test_api_keys_keep_working_when_the_django_secret_key_is_rotated(acme):
    """Rotating DJANGO_SECRET_KEY (sessions, CSRF) must not lock merchants out."""
    from gateway.platform.auth import merchant_for_api_key

    assert crypto.hash_api_key("gwk_abc") != crypto.hash_api_key("gwk_abd")
    with override_settings(SECRET_KEY="another-secret-key-for-this-test-only-0123456789"):
        assert merchant_for_api_key(acme.api_key).code == acme.code
