"""Request authentication shared by every API endpoint.

X-Api-Key identifies the merchant (found by its stored prefix, checked against the stored
hash in constant time). Views that the interface says need X-Merchant-Id set
`require_merchant_header = True`; when the header is sent anywhere it must match. A merchantId
in the body or query must be the key's merchant too (`ensure_same_merchant`). Every failure is
UNAUTHORIZED: the caller learns nothing about which part was wrong.
"""
from __future__ import annotations

import time

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.utils import timezone
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission

from gateway.core import crypto
from gateway.core.errors import Unauthorized
from gateway.core.tracing import set_merchant
from gateway.platform.key_lookup import api_key_from_row, api_key_row
from gateway.platform.models import ApiKey, Merchant


# Rows of keys found lately, by prefix: (monotonic time read, row). Every API request needs its
# key and merchant, and reading them was the largest single cost of an enquiry; most requests
# come from a few merchants, so a row read less than API_KEY_CACHE_SECONDS ago is used again.
# A change saved in this process forgets them at once (_forget); other processes see it within
# API_KEY_CACHE_SECONDS (docs/decisions.md, D7). Only keys that exist are kept, so random prefixes
# cannot fill it.
_recent: dict[str, tuple[float, tuple]] = {}
_RECENT_MAX = 10_000


def _key_row(prefix: str) -> tuple | None:
    ttl = settings.API_KEY_CACHE_SECONDS
    now = time.monotonic()
    if ttl > 0:
        hit = _recent.get(prefix)
        if hit is not None and now - hit[0] < ttl:
            return hit[1]
    row = api_key_row(prefix)
    if row is not None and ttl > 0:
        if len(_recent) >= _RECENT_MAX:
            _recent.clear()
        _recent[prefix] = (now, row)
    return row


def _forget(**kwargs) -> None:
    _recent.clear()
    # Again once the change commits: a request between the save and the commit may have read
    # the row as it was.
    transaction.on_commit(_recent.clear)


post_save.connect(_forget, sender=ApiKey, dispatch_uid="gateway.platform.auth.key_saved")
post_delete.connect(_forget, sender=ApiKey, dispatch_uid="gateway.platform.auth.key_deleted")
post_save.connect(_forget, sender=Merchant, dispatch_uid="gateway.platform.auth.merchant_saved")
post_delete.connect(_forget, sender=Merchant, dispatch_uid="gateway.platform.auth.merchant_deleted")


def _api_key_by_prefix(prefix: str) -> ApiKey | None:
    """The key with this prefix (unique) and its merchant, as new instances for this request,
    in one hand-written statement (gateway.platform.key_lookup), or none when read a moment
    ago (_recent)."""
    row = _key_row(prefix)
    return None if row is None else api_key_from_row(row)


def merchant_for_api_key(raw_key: str | None) -> Merchant:
    return api_key_authenticate(raw_key).merchant


def api_key_authenticate(raw_key: str | None) -> ApiKey:
    """The valid key `raw_key` (with its active merchant), or UNAUTHORIZED."""
    if not raw_key or len(raw_key) < ApiKey.PREFIX_LENGTH or len(raw_key) > 200:
        raise Unauthorized()
    key = _api_key_by_prefix(raw_key[: ApiKey.PREFIX_LENGTH])
    expected = key.key_hash if key else "0" * 64
    # Always hash and compare, so a missing prefix costs the same time as a wrong key.
    matches = crypto.constant_time_equals(expected, crypto.hash_api_key(raw_key))
    if key is None or not matches or not key.is_valid(timezone.now()) or not key.merchant.is_active:
        raise Unauthorized()
    return key


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request):
        header_code = request.headers.get("X-Merchant-Id")
        view = request.parser_context.get("view") if request.parser_context else None
        # Checked before the key, so the answer is the same whether the key is right or not.
        if header_code is None and getattr(view, "require_merchant_header", False):
            raise Unauthorized("X-Merchant-Id header is required.")
        key = api_key_authenticate(request.headers.get("X-Api-Key"))
        merchant = key.merchant
        if header_code is not None and header_code != merchant.code:
            raise Unauthorized()
        set_merchant(merchant.code)
        # request.auth is the key itself: a refund records which key made it.
        return (merchant, key)

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
