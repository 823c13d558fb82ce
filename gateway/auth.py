"""Request authentication shared by every API endpoint.

X-Api-Key identifies the merchant (found by its stored prefix, checked against the stored
hash in constant time). Views that the interface says need X-Merchant-Id set
`require_merchant_header = True`; when the header is sent anywhere it must match. A merchantId
in the body or query must be the key's merchant too (`ensure_same_merchant`). Every failure is
UNAUTHORIZED: the caller learns nothing about which part was wrong.
"""
from __future__ import annotations

from functools import lru_cache

from django.db import connection
from django.utils import timezone
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission

from gateway import crypto, sql
from gateway.errors import Unauthorized
from gateway.models import ApiKey, Merchant
from gateway.tracing import set_merchant


@lru_cache(maxsize=None)
def _key_sql() -> str:
    return (f"SELECT {sql.columns(ApiKey, 'k')}, {sql.columns(Merchant, 'm')} FROM {ApiKey._meta.db_table} k "
            f"JOIN {Merchant._meta.db_table} m ON m.id = k.merchant_id WHERE k.prefix = %s")


def _api_key_by_prefix(prefix: str) -> ApiKey | None:
    """The key with this prefix (unique) and its merchant, in one hand-written statement: this
    runs on every API request, and the ORM's select_related costs more CPU to compile than
    PostgreSQL takes to answer it (gateway/sql.py)."""
    with connection.cursor() as cursor:
        cursor.execute(_key_sql(), [prefix])
        row = cursor.fetchone()
    if row is None:
        return None
    split = sql.width(ApiKey)
    key = sql.instance(ApiKey, row[:split])
    key.merchant = sql.instance(Merchant, row[split:])
    return key


def merchant_for_api_key(raw_key: str | None) -> Merchant:
    if not raw_key or len(raw_key) < ApiKey.PREFIX_LENGTH or len(raw_key) > 200:
        raise Unauthorized()
    key = _api_key_by_prefix(raw_key[: ApiKey.PREFIX_LENGTH])
    expected = key.key_hash if key else "0" * 64
    # Always hash and compare, so a missing prefix costs the same time as a wrong key.
    matches = crypto.constant_time_equals(expected, crypto.hash_api_key(raw_key))
    if key is None or not matches or not key.is_valid(timezone.now()) or not key.merchant.is_active:
        raise Unauthorized()
    return key.merchant


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request):
        header_code = request.headers.get("X-Merchant-Id")
        view = request.parser_context.get("view") if request.parser_context else None
        # Checked before the key, so the answer is the same whether the key is right or not.
        if header_code is None and getattr(view, "require_merchant_header", False):
            raise Unauthorized("X-Merchant-Id header is required.")
        merchant = merchant_for_api_key(request.headers.get("X-Api-Key"))
        if header_code is not None and header_code != merchant.code:
            raise Unauthorized()
        set_merchant(merchant.code)
        return (merchant, None)

    def authenticate_header(self, request):
        # Makes DRF answer 401 (not 403) when authentication fails.
        return "X-Api-Key"


class IsMerchant(BasePermission):
    def has_permission(self, request, view):
        return isinstance(request.user, Merchant)


def ensure_same_merchant(merchant: Merchant, code) -> None:
    """The merchantId named in a body or query must be the authenticated merchant."""
    if code != merchant.code:
        raise Unauthorized()
