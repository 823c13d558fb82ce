"""Every write on merchants and their credentials. Raw secrets leave only as return values,
to be shown once."""
from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass
from datetime import timedelta

from cryptography.fernet import InvalidToken
from django.db import IntegrityError, transaction
from django.utils import timezone

from gateway.core import crypto
from gateway.core.errors import ValidationError
from gateway.platform.models import ApiKey, AuditRecord, Merchant, MerchantBrand, merchant_code_validator
from gateway.core.urlcheck import validate_webhook_url

AUDITED_FIELDS = ("code", "name", "is_active", "s2s_enabled", "webhook_url", "rate_limit",
                  "signed_requests_required", "payment_methods", "upi_collect")
RATE_LIMIT_MAX = 100_000


@dataclass(frozen=True)
class MerchantCredentials:
    merchantId: str
    apiKey: str
    secretKey: str
    webhookSecret: str

    def as_dict(self) -> dict:
        return asdict(self)


def _new_api_key_value() -> str:
    return "gwk_" + secrets.token_urlsafe(24)


def _new_secret_key_value() -> str:
    return "gws_" + secrets.token_hex(32)


def _new_webhook_secret_value() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def merchant_snapshot(merchant: Merchant) -> dict:
    """The audited view of a merchant: never a secret, not even encrypted. The brand's logo
    appears as its digest."""
    snapshot = {name: getattr(merchant, name) for name in AUDITED_FIELDS}
    brand = MerchantBrand.objects.filter(merchant_id=merchant.pk).defer("logo_png").first() if merchant.pk else None
    snapshot["brand"] = {"display_name": brand.display_name if brand else "",
                         "accent_color": brand.accent_color if brand else "",
                         "logo_sha256": brand.logo_sha256 if brand else ""}
    return snapshot


@dataclass(frozen=True)
class BrandChange:
    """A staff edit of the merchant's brand, already checked by gateway.platform.brand's *_clean."""

    display_name: str
    accent_color: str
    logo_png: bytes | None = None  # a new logo; None keeps the current one
    remove_logo: bool = False


def _brand_save(merchant: Merchant, change: BrandChange) -> None:
    from gateway.platform.brand import logo_digest

    brand = MerchantBrand.objects.filter(merchant=merchant).first()
    if brand is None:
        if not (change.display_name or change.accent_color or change.logo_png):
            return  # nothing to brand: the checkout keeps its own look
        brand = MerchantBrand(merchant=merchant)
    brand.display_name, brand.accent_color = change.display_name, change.accent_color
    if change.logo_png is not None:
        brand.logo_png, brand.logo_sha256 = change.logo_png, logo_digest(change.logo_png)
    elif change.remove_logo:
        brand.logo_png, brand.logo_sha256 = b"", ""
    brand.save()


def audit_record(*, actor, action: str, obj, merchant: Merchant | None = None,
                 before: dict | None = None, after: dict | None = None) -> AuditRecord:
    return AuditRecord.objects.create(
        actor=actor if getattr(actor, "pk", None) else None,
        actor_name=getattr(actor, "get_username", lambda: str(actor or "system"))(),
        action=action,
        merchant=merchant,
        object_type=obj._meta.label if hasattr(obj, "_meta") else type(obj).__name__,
        object_id=str(getattr(obj, "pk", obj)),
        before=before,
        after=after,
    )


def _api_key_create(merchant: Merchant) -> str:
    raw = _new_api_key_value()
    ApiKey.objects.create(merchant=merchant, prefix=raw[: ApiKey.PREFIX_LENGTH],
                          key_hash=crypto.hash_api_key(raw))
    return raw


@transaction.atomic
def merchant_create(*, code: str, name: str, webhook_url: str = "", s2s_enabled: bool = False,
                    rate_limit: int | None = None, signed_requests_required: bool = False,
                    actor=None) -> MerchantCredentials:
    """Onboard a merchant. Raises ValidationError for a bad code, address or limit, or a
    code already taken. Returns the credentials, which are never shown again."""
    try:
        merchant_code_validator(code)
    except Exception:
        raise ValidationError("must be 2 to 50 letters, digits, underscores or hyphens", field="code") from None
    if not name or len(name) > 200:
        raise ValidationError("must be 1 to 200 characters", field="name")
    if webhook_url:
        if len(webhook_url) > Merchant._meta.get_field("webhook_url").max_length:
            raise ValidationError("must be at most 500 characters", field="webhookUrl")
        validate_webhook_url(webhook_url, field="webhookUrl")
    if rate_limit is not None and not 1 <= rate_limit <= RATE_LIMIT_MAX:
        raise ValidationError(f"must be 1 to {RATE_LIMIT_MAX} requests per second", field="rateLimit")
    if Merchant.objects.filter(code=code).exists():
        raise ValidationError(f"merchant {code} already exists", field="code")
    secret_key = _new_secret_key_value()
    webhook_secret = _new_webhook_secret_value()
    try:
        with transaction.atomic():
            merchant = Merchant.objects.create(
                code=code, name=name, webhook_url=webhook_url, s2s_enabled=s2s_enabled, rate_limit=rate_limit,
                signed_requests_required=signed_requests_required,
                secret_key_encrypted=crypto.encrypt(secret_key),
                webhook_secret_encrypted=crypto.encrypt(webhook_secret),
            )
    except IntegrityError:  # the same code created at the same moment
        raise ValidationError(f"merchant {code} already exists", field="code") from None
    api_key = _api_key_create(merchant)
    audit_record(actor=actor, action="merchant.create", obj=merchant, merchant=merchant,
                 after=merchant_snapshot(merchant))
    return MerchantCredentials(merchant.code, api_key, secret_key, webhook_secret)


@transaction.atomic
def merchant_update(*, merchant: Merchant, actor, before: dict, brand: BrandChange | None = None) -> Merchant:
    """Record a staff edit made through the admin form (the form has already validated it):
    the merchant's fields, its payment methods (checked again here against gateway.platform.methods'
    rules) and, when given, its brand, with one audit record of the whole change."""
    from gateway.platform.methods import method_limits, methods_config_clean

    if merchant.webhook_url:
        validate_webhook_url(merchant.webhook_url, field="webhook_url")
    merchant.payment_methods = methods_config_clean(
        {limit.code: limit.as_dict() for limit in method_limits(merchant.payment_methods)})
    merchant.save()
    if brand is not None:
        _brand_save(merchant, brand)
    audit_record(actor=actor, action="merchant.update", obj=merchant, merchant=merchant,
                 before=before, after=merchant_snapshot(merchant))
    return merchant


@transaction.atomic
def merchant_set_webhook_url(*, merchant: Merchant, url: str, actor=None) -> Merchant:
    """Point the merchant's webhooks at `url` ("" stops them), audited as the console's edit
    is. Raises ValidationError naming webhookUrl for an address the console would refuse."""
    if len(url) > Merchant._meta.get_field("webhook_url").max_length:
        raise ValidationError("must be at most 500 characters", field="webhookUrl")
    if url:
        validate_webhook_url(url, field="webhookUrl")
    # Two edits at once would both audit the same "before"; the second waits for the first.
    merchant = Merchant.objects.select_for_update().get(pk=merchant.pk)
    before = merchant_snapshot(merchant)
    merchant.webhook_url = url
    merchant.save(update_fields=["webhook_url", "updated_at"])
    audit_record(actor=actor, action="merchant.update", obj=merchant, merchant=merchant,
                 before=before, after=merchant_snapshot(merchant))
    return merchant


@transaction.atomic
def merchant_rotate_api_key(*, merchant: Merchant, grace_seconds: int = 0, actor=None) -> str:
    """Issue a new API key. Existing keys stay valid for `grace_seconds` (0: revoked now)."""
    if grace_seconds < 0:
        raise ValidationError("must not be negative", field="grace_seconds")
    now = timezone.now()
    expires = now + timedelta(seconds=grace_seconds)
    # Locks the merchant's keys so two rotations at once cannot both leave a key unexpired.
    keys = list(ApiKey.objects.select_for_update().filter(merchant=merchant).order_by("pk"))
    live = [key for key in keys if key.is_valid(now)]
    before = {"api_keys": [_key_state(key) for key in live]}
    for key in live:
        if key.expires_at is None or key.expires_at > expires:
            key.expires_at = expires
            if key.rotated_at is None:
                key.rotated_at = now
                key.rotated_by = getattr(actor, "get_username", lambda: str(actor or "system"))()[:150]
            key.save(update_fields=["expires_at", "rotated_at", "rotated_by"])
    raw = _api_key_create(merchant)
    new_key = ApiKey.objects.get(prefix=raw[: ApiKey.PREFIX_LENGTH])
    audit_record(actor=actor, action="merchant.rotate_api_key", obj=merchant, merchant=merchant,
                 before=before,
                 after={"api_keys": [_key_state(key) for key in live] + [_key_state(new_key)],
                        "grace_seconds": grace_seconds})
    return raw


def _key_state(key: ApiKey) -> dict:
    """An API key as the audit log shows it: its row id and expiry, never the key or its hash."""
    return {"id": key.pk, "expires_at": key.expires_at.isoformat() if key.expires_at else None}


@transaction.atomic
def merchant_rotate_secret_key(*, merchant: Merchant, actor=None) -> str:
    raw = _new_secret_key_value()
    merchant.secret_key_encrypted = crypto.encrypt(raw)
    merchant.save(update_fields=["secret_key_encrypted", "updated_at"])
    audit_record(actor=actor, action="merchant.rotate_secret_key", obj=merchant, merchant=merchant)
    return raw


WEBHOOK_SECRET_GRACE_MAX_SECONDS = 7 * 24 * 3600
_PREVIOUS_WEBHOOK_SECRET_FIELDS = ["previous_webhook_secret_encrypted", "previous_webhook_secret_expires_at"]


@transaction.atomic
def merchant_rotate_webhook_secret(*, merchant: Merchant, grace_seconds: int = 0, actor=None) -> str:
    """Issue a new webhook secret; returns it (shown once). Every webhook is then signed with it.
    With `grace_seconds` > 0 the secret it replaces also signs a second header,
    X-Service-Signature-Previous, for that long, so receivers can switch without rejecting a
    delivery; it stays encrypted at rest and is wiped when the grace ends. 0: replaced at once.
    Only one previous secret is kept: rotating again within a grace ends the older one's.
    Raises ValidationError for a grace outside 0 to 7 days."""
    if not 0 <= grace_seconds <= WEBHOOK_SECRET_GRACE_MAX_SECONDS:
        raise ValidationError(f"must be 0 to {WEBHOOK_SECRET_GRACE_MAX_SECONDS} seconds (7 days)",
                              field="grace_seconds")
    now = timezone.now()
    # Locks the merchant so two rotations at once cannot both keep the same previous secret
    # while one of the two new secrets, shown to staff, is silently overwritten.
    locked = Merchant.objects.select_for_update().get(pk=merchant.pk)
    grace_left = locked.previous_webhook_secret_expires_at
    before = {"previous_secret_expires_at": _iso(grace_left) if grace_left and grace_left > now else None}
    if grace_seconds:
        locked.previous_webhook_secret_encrypted = crypto.encrypt(locked.webhook_secret)
        locked.previous_webhook_secret_expires_at = now + timedelta(seconds=grace_seconds)
    else:
        locked.previous_webhook_secret_encrypted = ""
        locked.previous_webhook_secret_expires_at = None
    raw = _new_webhook_secret_value()
    locked.webhook_secret_encrypted = crypto.encrypt(raw)
    locked.save(update_fields=["webhook_secret_encrypted", *_PREVIOUS_WEBHOOK_SECRET_FIELDS, "updated_at"])
    for field in ["webhook_secret_encrypted", *_PREVIOUS_WEBHOOK_SECRET_FIELDS, "updated_at"]:
        setattr(merchant, field, getattr(locked, field))
    audit_record(actor=actor, action="merchant.rotate_webhook_secret", obj=merchant, merchant=merchant,
                 before=before,
                 after={"grace_seconds": grace_seconds,
                        "previous_secret_expires_at": _iso(locked.previous_webhook_secret_expires_at)})
    return raw


def merchant_previous_webhook_secrets_forget(*, now=None) -> int:
    """Wipe every previous webhook secret whose grace period has ended (the beat runs this each
    minute; signing already ignores an expired one). Returns how many were wiped."""
    now = now or timezone.now()
    return Merchant.objects.filter(previous_webhook_secret_expires_at__lte=now).update(
        previous_webhook_secret_encrypted="", previous_webhook_secret_expires_at=None)


def _iso(value) -> str | None:
    return value.isoformat() if value else None


@dataclass
class ReencryptResult:
    changed: int
    failed: list[str]  # codes of merchants whose secrets no configured key decrypts


def secrets_reencrypt(*, actor=None) -> ReencryptResult:
    """Re-encrypt every merchant secret under the first key of GATEWAY_ENCRYPTION_KEYS.
    Safe to run twice and while serving. A merchant whose secrets no configured key can read
    is skipped and reported (its secrets stay as they were), the others are still moved."""
    result = ReencryptResult(changed=0, failed=[])
    for merchant_id in Merchant.objects.order_by("pk").values_list("id", flat=True):
        with transaction.atomic():
            # Lock so a concurrent rotation is not overwritten with the old secret.
            merchant = Merchant.objects.select_for_update().get(id=merchant_id)
            fields = ["secret_key_encrypted", "webhook_secret_encrypted"]
            if merchant.previous_webhook_secret_encrypted:
                fields.append("previous_webhook_secret_encrypted")
            if all(crypto.is_current(getattr(merchant, field)) for field in fields):
                continue
            try:
                for field in fields:
                    setattr(merchant, field, crypto.reencrypt(getattr(merchant, field)))
            except InvalidToken:
                result.failed.append(merchant.code)
                continue
            merchant.save(update_fields=[*fields, "updated_at"])
            audit_record(actor=actor, action="merchant.reencrypt_secrets", obj=merchant, merchant=merchant)
            result.changed += 1
    return result
