"""The merchant platform: merchants, their API keys and the staff audit log."""
from __future__ import annotations

from django.conf import settings
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.utils import timezone

from gateway.core import crypto

merchant_code_validator = RegexValidator(
    r"^[A-Za-z0-9_-]{2,50}$", "2 to 50 letters, digits, underscores or hyphens."
)


class Merchant(models.Model):
    code = models.CharField("merchant code (merchantId)", max_length=50, unique=True,
                            validators=[merchant_code_validator])
    name = models.CharField(max_length=200)
    is_active = models.BooleanField(default=True)
    s2s_enabled = models.BooleanField("S2S enabled", default=False)
    signed_requests_required = models.BooleanField(
        "signed requests required", default=False,
        help_text="Recommended. Refunds, refund status and enquiry must then carry a valid checksum and "
                  "timestamp (the official SDK 3.0.0 sends them), so an API key alone cannot move money: "
                  "whoever rotates or reads a key still needs the secret key. See docs/security.md.")
    webhook_url = models.URLField("webhook address", max_length=500, blank=True)
    # UPI Collect on the hosted checkout (the customer types a UPI ID and approves a request in
    # the app). NPCI ended it for most one-time merchant payments from 28 February 2026: intent
    # and QR lead everywhere, and Collect is offered only where staff turn it on for a merchant
    # whose case still allows it (docs/going-live.md, UPI). None: the environment's default
    # (upi_collect_allowed).
    upi_collect = models.BooleanField(
        "UPI collect (customer types a UPI ID)", null=True, blank=True, default=None,
        help_text="Unknown: the default, on in staging (the sandbox's test UPI IDs), off in production. "
                  "Turn it on in production only for a case NPCI still allows Collect "
                  "(docs/going-live.md, UPI by intent and QR).")
    rate_limit = models.PositiveIntegerField(
        "rate limit (requests/second)", null=True, blank=True, validators=[MinValueValidator(1)],
        help_text="Empty: the default from settings.",
    )
    # The hosted-checkout methods the merchant changed from their defaults, with their amount
    # limits in paise: {"RTGS": {"enabled": true, "min": ..., "max": ...}}. Read through
    # gateway.platform.methods, which fills in the defaults and holds every value to the banking rules.
    payment_methods = models.JSONField(default=dict, blank=True, editable=False)
    secret_key_encrypted = models.TextField(editable=False)
    webhook_secret_encrypted = models.TextField(editable=False)
    # A rotated webhook secret, encrypted like the current one, that still signs a second header
    # (X-Service-Signature-Previous) until `previous_webhook_secret_expires_at`; wiped after it
    # by the beat task webhooks.tasks.previous_webhook_secrets_forget (docs/webhooks.md).
    previous_webhook_secret_encrypted = models.TextField(editable=False, blank=True, default="")
    previous_webhook_secret_expires_at = models.DateTimeField(editable=False, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["code"]

    def __str__(self) -> str:
        return f"{self.code} ({self.name})"

    @property
    def secret_key(self) -> str:
        return crypto.decrypt(self.secret_key_encrypted)

    @property
    def webhook_secret(self) -> str:
        return crypto.decrypt(self.webhook_secret_encrypted)

    def previous_webhook_secret(self, now=None) -> str | None:
        """The rotated-out webhook secret while its grace period lasts, else None."""
        expires = self.previous_webhook_secret_expires_at
        if not self.previous_webhook_secret_encrypted or expires is None or expires <= (now or timezone.now()):
            return None
        return crypto.decrypt(self.previous_webhook_secret_encrypted)

    @property
    def effective_rate_limit(self) -> int:
        return self.rate_limit or settings.DEFAULT_RATE_LIMIT_PER_SECOND

    @property
    def upi_collect_allowed(self) -> bool:
        """Whether the checkout offers UPI Collect (a typed UPI ID) to this merchant's customers:
        the staff's setting, else on in staging and off in production."""
        return self.upi_collect if self.upi_collect is not None else not settings.IS_PRODUCTION


class MerchantBrand(models.Model):
    """How the merchant looks on the checkout (gateway.platform.brand checks every value). A table of its
    own, not columns of Merchant: the API reads the merchant row on every request, and the logo
    must not ride along."""

    merchant = models.OneToOneField(Merchant, on_delete=models.CASCADE, primary_key=True, related_name="brand")
    display_name = models.CharField(max_length=100, blank=True, help_text="Empty: the merchant's name.")
    accent_color = models.CharField(max_length=7, blank=True, help_text="#rrggbb; empty: the checkout's blue.")
    # A PNG re-encoded by gateway.platform.brand.logo_clean, served by the checkout under its digest.
    logo_png = models.BinaryField(blank=True, default=b"", editable=False)
    logo_sha256 = models.CharField(max_length=64, blank=True, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"brand of {self.merchant_id}"


class ApiKey(models.Model):
    """One API key of a merchant. Only a keyed hash is stored; `prefix` finds the row."""

    PREFIX_LENGTH = 16

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="api_keys")
    prefix = models.CharField(max_length=PREFIX_LENGTH, unique=True)
    key_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set when the key is rotated away: the key keeps working until then (grace period).
    expires_at = models.DateTimeField(null=True, blank=True)
    # When and by whom it was rotated away: a refund made with it after that (in its grace
    # period) is pointed out on the console's payment page.
    rotated_at = models.DateTimeField(null=True, blank=True)
    rotated_by = models.CharField(max_length=150, blank=True)

    class Meta:
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.merchant.code})"

    def is_valid(self, now=None) -> bool:
        return self.expires_at is None or self.expires_at > (now or timezone.now())

    def was_rotated_before(self, moment) -> bool:
        """Whether this key had already been rotated away (and was in its grace period) at `moment`."""
        return self.rotated_at is not None and self.rotated_at <= moment


class AuditRecord(models.Model):
    """Who did what to which object, when, with the before and after (never a secret)."""

    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    actor_name = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=100)
    merchant = models.ForeignKey(Merchant, null=True, blank=True, on_delete=models.SET_NULL)
    object_type = models.CharField(max_length=100)
    object_id = models.CharField(max_length=100)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        # A payment's page shows the staff actions on it and on its refunds and deliveries.
        indexes = [models.Index(fields=["object_type", "object_id"], name="audit_object")]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor_name} {self.action} {self.object_type}:{self.object_id}"


class CredentialClaim(models.Model):
    """A merchant's new credentials on their way to the merchant, under split knowledge and dual
    control (gateway/platform/claims.py, docs/security.md): the administrator who asked for them
    holds one code, a second administrator who approved them holds the other, and only both
    codes together open the claim page, once, before `expires_at`. No staff page ever shows the
    credentials. Codes are kept as SHA-256 hashes; the credentials Fernet-encrypted, and wiped
    when claimed."""

    class Purpose(models.TextChoices):
        ONBOARDING = "onboarding", "onboarding (API key, secret key, webhook secret)"
        API_KEY = "api-key", "API key rotation"
        SECRET_KEY = "secret-key", "secret key rotation"
        WEBHOOK_SECRET = "webhook-secret", "webhook secret rotation"
        # No credential and no codes: turning "signed requests required" off waits for a second
        # administrator in the same way, and is done (claimed_at) when approved.
        SIGNED_REQUESTS_OFF = "signed-requests-off", "turning signed requests off"

    claim_id = models.CharField(max_length=40, unique=True)
    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="credential_claims")
    purpose = models.CharField(max_length=20, choices=Purpose.choices)
    grace_seconds = models.PositiveIntegerField(default=0)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    requested_at = models.DateTimeField(auto_now_add=True)
    requester_code_hash = models.CharField(max_length=64)
    approved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    approved_at = models.DateTimeField(null=True, blank=True)
    approver_code_hash = models.CharField(max_length=64, blank=True)
    values_encrypted = models.TextField(blank=True, default="")
    expires_at = models.DateTimeField()
    failed_tries = models.PositiveSmallIntegerField(default=0)
    claimed_at = models.DateTimeField(null=True, blank=True)
    claimed_from = models.CharField(max_length=100, blank=True)
    voided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-requested_at"]

    def __str__(self) -> str:
        return f"{self.claim_id} ({self.merchant_id}, {self.purpose})"

    @property
    def state(self) -> str:
        """waiting for approval, ready to claim, claimed, void or expired."""
        if self.claimed_at:
            return "claimed"
        if self.voided_at:
            return "void"
        if self.expires_at <= timezone.now():
            return "expired"
        return "ready to claim" if self.approved_at else "waiting for a second administrator"
