"""Credentials the console makes reach the merchant through a claim that two administrators'
codes open (gateway.platform.claims): helpers to walk that path in tests."""
from __future__ import annotations

import re

from django.test import Client

from tests.support.factories import staff_in


def handed_code(response) -> tuple[str, str]:
    """The code and the claim's address on the page that hands a code out."""
    html = response.content.decode()
    code = re.search(r'data-claim-code="\w+">([0-9a-f-]+)<', html).group(1)
    url = re.search(r"data-claim-url>([^<]+)<", html).group(1)
    return code, url


def approve(merchant, approver: Client | None = None):
    """A second administrator approves the merchant's waiting request; returns the code page."""
    from gateway.platform.models import CredentialClaim

    if approver is None:
        approver = Client()
        approver.force_login(staff_in("administrators"))
    claim = CredentialClaim.objects.filter(merchant=merchant, approved_at__isnull=True).latest("requested_at")
    return approver.post(f"/admin/gateway/merchant/{merchant.pk}/credentials/{claim.claim_id}/approve/")


def claim(url: str, first: str, second: str, client: Client | None = None, **extra):
    path = url.split("://", 1)[-1].split("/", 1)[1]
    return (client or Client()).post("/" + path, {"first_code": first, "second_code": second}, **extra)


def shown_credentials(response) -> dict:
    return dict(re.findall(r'data-credential="(\w+)">([^<]+)<', response.content.decode()))


def through_a_claim(request_response, merchant, approver: Client | None = None) -> dict:
    """From the page a request answered with: a second administrator approves, and the merchant
    claims with both codes. Returns the credentials the merchant was shown."""
    first, url = handed_code(request_response)
    second, _ = handed_code(approve(merchant, approver))
    return shown_credentials(claim(url, first, second))
