"""Secrets at rest and API-key hashing.

Merchant secrets (the secret key and the webhook secret) must be readable by the service, so
they are encrypted with Fernet under GATEWAY_ENCRYPTION_KEYS: the first key encrypts, every key
decrypts, and `manage.py reencrypt_secrets` moves everything to the first key. API keys are
only ever compared, so only a hash is kept.
"""
import hashlib
import hmac
import secrets
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


@lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(k.encode()) for k in keys])


def fernet() -> MultiFernet:
    return _fernet(tuple(settings.GATEWAY_ENCRYPTION_KEYS))


def encrypt(plaintext: str) -> str:
    return fernet().encrypt(plaintext.encode()).decode()


def decrypt(token: str) -> str:
    return _decrypt(tuple(settings.GATEWAY_ENCRYPTION_KEYS), token)


@lru_cache(maxsize=4096)
def _decrypt(keys: tuple[str, ...], token: str) -> str:
    """Remembered per process: a token always decrypts to the same secret, and every checksum
    verification needs the merchant's secret, which cost an S2S creation 3% of its CPU. Only
    the process's memory holds the plaintext, as it did during each request before; what is
    at rest stays encrypted. A rotated secret is a new token, so it is never served stale."""
    try:
        return _fernet(keys).decrypt(token.encode()).decode()
    except InvalidToken as exc:  # a key was removed before re-encryption
        raise RuntimeError("a merchant secret cannot be decrypted with GATEWAY_ENCRYPTION_KEYS") from exc


def reencrypt(token: str) -> str:
    """Decrypt with any configured key, encrypt with the first."""
    return fernet().rotate(token.encode()).decode()


def is_current(token: str) -> bool:
    """True when `token` is already encrypted under the first key."""
    first = Fernet(settings.GATEWAY_ENCRYPTION_KEYS[0].encode())
    try:
        first.decrypt(token.encode())
    except InvalidToken:
        return False
    return True


def random_token(nbytes: int = 24) -> str:
    return secrets.token_urlsafe(nbytes)


def hash_api_key(raw_key: str) -> str:
    """API keys carry 192 random bits, so a plain SHA-256 cannot be reversed or guessed and no
    slow KDF or pepper is needed. Deliberately not keyed with DJANGO_SECRET_KEY: rotating
    Django's key (sessions, CSRF) must never lock every merchant out."""
    return hashlib.sha256(raw_key.encode()).hexdigest()


def constant_time_equals(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())
