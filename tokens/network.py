"""The sandbox card network: issues, authorises and deletes network tokens. Staging only.

A real network provisions a token from the card number and answers with a token reference;
this simulator is given only what the gateway keeps of a card (network, last 4 digits, the
issuer's name) and the proof that the card was just authenticated (the consenting payment's
bank reference), and keeps a ledger (SandboxNetworkToken) of the references it issued. It never
receives, stores or returns a card number or a CVV: `authorize` checks the CVV's form, in
memory, as a sandbox issuer accepts any CVV.

Test behaviour (docs/tokens.md): every live reference answers a 3-D Secure challenge (OTP
123456 approves, as for cards); a deleted or unknown reference is declined.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from django.db import transaction
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from gateway.core.ids import random_string
from tokens.models import SandboxNetworkToken
from tokens.selectors import ensure_tokens_available

_REFERENCE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


class NetworkOutcome(str, Enum):
    CHALLENGE = "challenge"    # the issuer asks the customer for a 3-D Secure OTP
    DECLINED = "declined"      # a final no; `message` says why


@dataclass(frozen=True)
class NetworkAnswer:
    """The network's answer to a payment with a token. The values of `outcome` are those of
    the acquirer's answers (payments.acquirer.base.Outcome), so the payment that asked can
    record it as one."""
    outcome: NetworkOutcome
    message: str = ""
    issuer: str = ""
    # What the network said, for the payment's story. Never carries card data.
    raw: dict = field(default_factory=dict)


@dataclass(frozen=True)
class NetworkToken:
    reference: str
    network: str
    last4: str
    issuer: str


class NetworkRefused(Exception):
    """The network would not issue a token (e.g. not proof of a recent authentication)."""


class SandboxCardNetwork:
    name = "sandbox"

    def provision(self, *, network: str, last4: str, issuer: str, authentication_reference: str) -> NetworkToken:
        """Issue a token reference for an authenticated card. Raises NetworkRefused."""
        if not authentication_reference:
            raise NetworkRefused("no authenticated payment to provision the token from")
        # Letters and a few digits: a reference must never look like a card number.
        reference = f"NTR-{network[:4]}-" + random_string(_REFERENCE_ALPHABET, 20)
        with transaction.atomic():
            SandboxNetworkToken.objects.create(reference=reference, network=network, last4=last4, issuer=issuer)
        return NetworkToken(reference, network, last4, issuer)

    @sensitive_variables("cvv")
    def authorize(self, *, reference: str, cvv: str, amount: int) -> NetworkAnswer:
        """A payment with a token: the issuer challenges the customer (3-D Secure) when the
        token is live, else the network declines. Raw details never carry the CVV."""
        record = SandboxNetworkToken.objects.filter(reference=reference).first()
        if record is None or record.status != SandboxNetworkToken.Status.ACTIVE:
            return NetworkAnswer(NetworkOutcome.DECLINED, message="the card network declined: token not active (sandbox)",
                                 raw={"result": "declined", "network": "token not active"})
        if not re.fullmatch(r"\d{3,4}", cvv or ""):
            return NetworkAnswer(NetworkOutcome.DECLINED, message="the card network declined: CVV missing (sandbox)",
                                 issuer=record.issuer, raw={"result": "declined", "network": "cvv missing"})
        return NetworkAnswer(NetworkOutcome.CHALLENGE, issuer=record.issuer,
                             raw={"result": "3ds challenge", "last4": record.last4, "acs": "sandbox-acs",
                                   "network": "token authorised"})

    def delete(self, *, reference: str) -> None:
        """Delete a token at the network; deleting one that is gone already is not an error."""
        SandboxNetworkToken.objects.filter(reference=reference, status=SandboxNetworkToken.Status.ACTIVE).update(
            status=SandboxNetworkToken.Status.DELETED, deleted_at=timezone.now())


def get_network() -> SandboxCardNetwork:
    """The card network tokens come from: the sandbox's, and nothing in production (the beta
    is staging only)."""
    ensure_tokens_available()
    return SandboxCardNetwork()
