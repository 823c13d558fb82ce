"""Card tokenisation (beta, staging only): the customer's consent, the per-merchant vault, and
the sandbox card network's own ledger.

tokens stands below payments (a saved card exists apart from the payments that use it): its
rows point at a payment by the string "payments.Payment", and nothing here imports payments.

What is kept of a card, anywhere in this app: the network, the last 4 digits, the expiry
month and year, the issuer's name and the network's token reference. Never the card number,
never the CVV (interface.md, "Rules about card data"; docs/tokens.md).
"""
from __future__ import annotations

import string

from django.db import models
from django.db.models import Q

from gateway.core.ids import random_string
from gateway.platform.models import Merchant

_BASE62 = string.ascii_letters + string.digits


def new_token_id() -> str:
    """'tok_' and 24 base-62 characters (about 143 random bits)."""
    return "tok_" + random_string(_BASE62, 24)


class CardConsent(models.Model):
    """The customer ticked "save this card" (`save_card`) on the checkout's card form.

    Recorded when the card is submitted, with the exact text the customer was shown. The
    3-D Secure OTP of the same payment is the additional authentication factor: a token is
    made only from a consent whose payment reached SUCCESS, which a card payment does only
    through that OTP. The card's expiry is kept here only until the token is made (it moves
    to the token) or the consent can no longer become one (tokens.services.card_consents_purge).
    """

    payment = models.OneToOneField("payments.Payment", on_delete=models.PROTECT, related_name="card_consent")
    text = models.TextField(help_text="exactly what the customer was shown")
    given_at = models.DateTimeField()
    expiry_month = models.PositiveSmallIntegerField(null=True, blank=True)
    expiry_year = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(expiry_month__isnull=True) | Q(expiry_month__gte=1, expiry_month__lte=12),
                                   name="cardconsent_expiry_month_valid"),
        ]

    def __str__(self) -> str:
        return f"consent of {self.payment.payment_id}"


class Token(models.Model):
    """A card-on-file token in one merchant's vault. Never leaves its merchant: every read is
    scoped to it (tokens.selectors). One token per consenting payment."""

    class Status(models.TextChoices):
        ACTIVE = "ACTIVE"
        DELETED = "DELETED"

    token_id = models.CharField("tokenId", max_length=40, unique=True, default=new_token_id)
    merchant = models.ForeignKey(Merchant, on_delete=models.PROTECT, related_name="card_tokens")
    payment = models.OneToOneField("payments.Payment", on_delete=models.PROTECT, related_name="card_token",
                                   help_text="the successful payment during which the customer consented")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE, db_index=True)

    network = models.CharField(max_length=20)
    last4 = models.CharField(max_length=4)
    # The vault may keep the expiry (the merchant may not): cleared when the token is deleted.
    expiry_month = models.PositiveSmallIntegerField(null=True, blank=True)
    expiry_year = models.PositiveSmallIntegerField(null=True, blank=True)
    issuer = models.CharField(max_length=60, blank=True)
    # The card network's reference for this token: what pays. Cleared when the token is deleted.
    network_reference = models.CharField(max_length=64, blank=True)

    # The merchant's record of the consent, as sent on creation.
    consent_timestamp = models.DateTimeField()
    consent_text = models.TextField()

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = models.CharField(max_length=160, blank=True, help_text="the merchant (API) or the staff user")

    class Meta:
        indexes = [models.Index(fields=["merchant", "-created_at"], name="token_merchant_created")]
        permissions = [("revoke_token", "Can delete a card token (through the token service, audited)")]
        constraints = [
            models.CheckConstraint(
                condition=Q(status="DELETED") | (Q(expiry_month__gte=1, expiry_month__lte=12)
                                                 & Q(expiry_year__isnull=False) & ~Q(network_reference="")),
                name="token_active_has_expiry_and_reference"),
        ]

    def __str__(self) -> str:
        return f"{self.token_id} {self.network} ending {self.last4} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status == self.Status.ACTIVE


class TokenPayment(models.Model):
    """A hosted payment created with `tokenId`: the checkout offers this token's card."""

    payment = models.OneToOneField("payments.Payment", on_delete=models.PROTECT, related_name="token_use")
    token = models.ForeignKey(Token, on_delete=models.PROTECT, related_name="uses")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.payment.payment_id} with {self.token.token_id}"


class SandboxNetworkToken(models.Model):
    """The sandbox card network's own ledger (tokens.network): which network tokens it has
    issued and whether they are still live. Like a real network it would know the card number;
    unlike one it never receives it, so it keeps none."""

    class Status(models.TextChoices):
        ACTIVE = "ACTIVE"
        DELETED = "DELETED"

    reference = models.CharField(max_length=64, unique=True)
    network = models.CharField(max_length=20)
    last4 = models.CharField(max_length=4)
    issuer = models.CharField(max_length=60, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.reference} ({self.status})"
