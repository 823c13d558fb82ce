"""Credentials staff make reach the merchant under split knowledge and dual control.

The property (docs/security.md, "Separation of duties"): no single staff account can both
obtain a merchant's secret and move that merchant's money. An API key is enough to refund
through the API, so whoever reads a merchant's key can move its money; the only way to keep
the two apart is that no single staff account ever reads a key. So:

- No console page shows a credential. Onboarding a merchant in the console, or rotating its API
  key, secret key or webhook secret, is a *request* (credential_claim_request): it makes a
  CredentialClaim and hands the administrator who asked a first code, shown once.
- A second administrator approves it (credential_claim_approve): not the same account, and not an
  account the first one created or changed (a superuser cannot approve through an account of
  their own making). Only then is the rotation done, and the approver is handed the second
  code, shown once.
- The merchant opens the claim's address and types both codes (credential_claim_open): the
  credentials are shown once, then wiped from the claim; the use is audited with the address.
  Each code alone opens nothing; five wrong tries void the claim; an unclaimed claim expires
  CLAIM_LIFETIME after it was asked for.

Codes are 128 random bits, stored as SHA-256 hashes; the credentials wait encrypted (Fernet,
GATEWAY_ENCRYPTION_KEYS) between approval and claim. Operators on the server (create_merchant,
which CONTRACT.md has print the onboarding credentials) hold the database and its encryption
keys anyway, and are outside this rule.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from gateway.core import crypto
from gateway.core.errors import GatewayError, NotFound, ValidationError
from gateway.platform import services
from gateway.platform.models import AuditRecord, CredentialClaim, Merchant

CLAIM_LIFETIME = timedelta(hours=72)
CLAIM_MAX_FAILED_TRIES = 5
Purpose = CredentialClaim.Purpose


class ClaimRefused(GatewayError):
    """A request, approval or claim the rules refuse; the message says why, for a person."""

    code = "VALIDATION_ERROR"


def _code() -> str:
    # 128 bits, in groups a person can read out over a phone.
    raw = secrets.token_hex(16)
    return "-".join(raw[i:i + 4] for i in range(0, 32, 4))


def _hash(code: str) -> str:
    return hashlib.sha256("".join(code.split()).replace("-", "").lower().encode()).hexdigest()


def claim_url(claim: CredentialClaim) -> str:
    return settings.GATEWAY_PUBLIC_URL + reverse("credential-claim", args=[claim.claim_id])


@dataclass(frozen=True)
class CodeHandedOut:
    claim: CredentialClaim
    code: str  # shown once, to the person it is for

    @property
    def url(self) -> str:
        return claim_url(self.claim)


def _audit(*, actor, action: str, claim: CredentialClaim, **after) -> None:
    services.audit_record(actor=actor, action=action, obj=claim.merchant, merchant=claim.merchant,
                          after={"claim": claim.claim_id, "purpose": claim.purpose, **after})


@transaction.atomic
def credential_claim_request(*, merchant: Merchant, purpose: str, actor, grace_seconds: int = 0,
                             values: dict | None = None) -> CodeHandedOut:
    """Ask for `merchant`'s new credentials of `purpose`; returns the requester's code. For
    onboarding the credentials already exist (`values`, kept encrypted until claimed); for a
    rotation nothing changes until a second administrator approves. Audited as
    merchant.credentials_request. Raises ValidationError for an unknown purpose or a grace the
    rotation refuses."""
    if purpose not in Purpose.values:
        raise ValidationError("is not a credential kind", field="purpose")
    if purpose == Purpose.WEBHOOK_SECRET and not 0 <= grace_seconds <= services.WEBHOOK_SECRET_GRACE_MAX_SECONDS:
        raise ValidationError("must be 0 to 7 days", field="grace_seconds")
    if grace_seconds < 0:
        raise ValidationError("must not be negative", field="grace_seconds")
    code = _code()
    claim = CredentialClaim.objects.create(
        claim_id="clm_" + secrets.token_urlsafe(18), merchant=merchant, purpose=purpose, grace_seconds=grace_seconds,
        requested_by=actor if getattr(actor, "pk", None) else None, requester_code_hash=_hash(code),
        values_encrypted=crypto.encrypt(json.dumps(values)) if values else "",
        expires_at=timezone.now() + CLAIM_LIFETIME)
    _audit(actor=actor, action="merchant.credentials_request", claim=claim, grace_seconds=grace_seconds)
    return CodeHandedOut(claim, code)


@transaction.atomic
def signed_requests_off_request(*, merchant: Merchant, actor) -> CredentialClaim:
    """Ask to turn "signed requests required" off (the setting that keeps a key alone from moving
    money): nothing changes until a second administrator approves (credential_claim_approve).
    One request waits at a time; asking again returns it. Audited as merchant.credentials_request."""
    waiting = CredentialClaim.objects.filter(merchant=merchant, purpose=Purpose.SIGNED_REQUESTS_OFF,
                                             approved_at__isnull=True, voided_at__isnull=True,
                                             expires_at__gt=timezone.now()).first()
    if waiting is not None:
        return waiting
    claim = CredentialClaim.objects.create(
        claim_id="clm_" + secrets.token_urlsafe(18), merchant=merchant, purpose=Purpose.SIGNED_REQUESTS_OFF,
        requested_by=actor if getattr(actor, "pk", None) else None, requester_code_hash="",
        expires_at=timezone.now() + CLAIM_LIFETIME)
    _audit(actor=actor, action="merchant.credentials_request", claim=claim)
    return claim


def approver_refusal(claim: CredentialClaim, approver) -> str | None:
    """Why `approver` may not approve `claim`, or None. The approver must hold
    gateway.change_merchant and be another account than the requester, and not one the
    requester created or changed (its password, groups or permissions: the audit log's
    staff_user.* records)."""
    from gateway.platform.roles import CHANGE_MERCHANT, permission_refusal

    refused = permission_refusal(approver, CHANGE_MERCHANT, "Approving")
    if refused is not None:
        return refused
    requester = claim.requested_by
    if requester is None or approver.pk == requester.pk:
        return ("A second administrator must approve: the account that asked for these credentials cannot "
                "approve them.")
    shaped = AuditRecord.objects.filter(actor=requester, action__in=("staff_user.create", "staff_user.update"),
                                        object_type=get_user_model()._meta.label, object_id=str(approver.pk))
    if shaped.exists():
        return (f"{requester.get_username()} created or changed this account, so it cannot be the second "
                "administrator for their request.")
    return None


def credential_claim_approve(*, claim_id: str, actor) -> CodeHandedOut:
    """A second administrator approves: the rotation is done now (through the rotation services,
    audited as ever, with actor the approver), its new credentials kept encrypted in the claim,
    and the approver's code returned. Raises ClaimRefused (the reason) for the requester
    themself, an account they shaped, or a claim no longer waiting."""
    with transaction.atomic():
        # Two approvals at once must not rotate twice.
        claim = CredentialClaim.objects.select_for_update(of=("self",)) \
            .select_related("merchant", "requested_by").filter(claim_id=claim_id).first()
        if claim is None:
            raise NotFound()
        refusal = approver_refusal(claim, actor)
        if refusal:
            raise ClaimRefused(refusal, field="approver")
        if claim.approved_at or claim.state != "waiting for a second administrator":
            raise ClaimRefused(f"This request is {claim.state}; nothing to approve.", field="claim")
        merchant = claim.merchant
        if claim.purpose == Purpose.SIGNED_REQUESTS_OFF:
            locked = Merchant.objects.select_for_update().get(pk=merchant.pk)
            before = services.merchant_snapshot(locked)
            locked.signed_requests_required = False
            locked.save(update_fields=["signed_requests_required", "updated_at"])
            services.audit_record(actor=actor, action="merchant.update", obj=locked, merchant=locked, before=before,
                                  after={**services.merchant_snapshot(locked),
                                         "requested_by": claim.requested_by.get_username()})
            now = timezone.now()
            claim.approved_by, claim.approved_at, claim.claimed_at = actor, now, now
            claim.save(update_fields=["approved_by", "approved_at", "claimed_at"])
            _audit(actor=actor, action="merchant.credentials_approve", claim=claim,
                   requested_by=claim.requested_by.get_username())
            return CodeHandedOut(claim, "")
        if claim.purpose == Purpose.API_KEY:
            values = {"apiKey": services.merchant_rotate_api_key(merchant=merchant, grace_seconds=claim.grace_seconds,
                                                                 actor=actor)}
        elif claim.purpose == Purpose.SECRET_KEY:
            values = {"secretKey": services.merchant_rotate_secret_key(merchant=merchant, actor=actor)}
        elif claim.purpose == Purpose.WEBHOOK_SECRET:
            values = {"webhookSecret": services.merchant_rotate_webhook_secret(
                merchant=merchant, grace_seconds=claim.grace_seconds, actor=actor)}
        else:
            values = None  # onboarding: made with the merchant, waiting encrypted already
        code = _code()
        now = timezone.now()
        claim.approved_by, claim.approved_at, claim.approver_code_hash = actor, now, _hash(code)
        if values is not None:
            claim.values_encrypted = crypto.encrypt(json.dumps(values))
        claim.expires_at = max(claim.expires_at, now + timedelta(hours=24))
        claim.save(update_fields=["approved_by", "approved_at", "approver_code_hash", "values_encrypted",
                                  "expires_at"])
        _audit(actor=actor, action="merchant.credentials_approve", claim=claim,
               requested_by=claim.requested_by.get_username())
    return CodeHandedOut(claim, code)


def credential_claim_open(*, claim_id: str, first_code: str, second_code: str, address: str) -> dict:
    """The merchant's side: both codes open the claim once. Returns the credentials (to show
    once) and wipes them from the claim; audited as merchant.credentials_claim with the address.
    Raises NotFound for an unknown claim, ClaimRefused for wrong codes (counted; the fifth voids
    the claim), or a claim not approved, already used, void or expired."""
    with transaction.atomic():
        # Two tries at once must not both read the credentials, nor both escape the count.
        claim = CredentialClaim.objects.select_for_update(of=("self",)).select_related("merchant") \
            .filter(claim_id=claim_id).first()
        if claim is None:
            raise NotFound()
        if claim.state != "ready to claim":
            raise ClaimRefused(f"This claim is {claim.state}. Ask the gateway's administrators for a new one.",
                               field="claim")
        right = (hmac.compare_digest(_hash(first_code or ""), claim.requester_code_hash)
                 and hmac.compare_digest(_hash(second_code or ""), claim.approver_code_hash))
        if not right:
            claim.failed_tries += 1
            if claim.failed_tries >= CLAIM_MAX_FAILED_TRIES:
                claim.voided_at, claim.values_encrypted = timezone.now(), ""
            claim.save(update_fields=["failed_tries", "voided_at", "values_encrypted"])
            _audit(actor="merchant", action="merchant.credentials_claim_refused", claim=claim, address=address,
                   failed_tries=claim.failed_tries)
            refused = ClaimRefused("These codes do not open this claim.", field="codes")
        else:
            values = json.loads(crypto.decrypt(claim.values_encrypted))
            claim.claimed_at, claim.claimed_from, claim.values_encrypted = timezone.now(), address[:100], ""
            claim.save(update_fields=["claimed_at", "claimed_from", "values_encrypted"])
            _audit(actor="merchant", action="merchant.credentials_claim", claim=claim, address=address)
            refused = None
    if refused is not None:
        raise refused  # after the commit: the count and the audit record stay
    return {"merchantId": claim.merchant.code, **values}


def pending_claims(merchant: Merchant) -> list[CredentialClaim]:
    """The merchant's claims still waiting for approval or for the merchant, newest first."""
    return [claim for claim in CredentialClaim.objects.select_related("requested_by", "approved_by")
            .filter(merchant=merchant, claimed_at__isnull=True, voided_at__isnull=True,
                    expires_at__gt=timezone.now())]
