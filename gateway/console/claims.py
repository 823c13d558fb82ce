"""The page where a merchant claims credentials staff made (gateway.platform.claims): both codes,
from the two administrators, open it once. Public (the merchant has no console account); the
credentials are shown on the answer to the POST only, never cached, and never again."""
from __future__ import annotations

from django.http import Http404
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods

from gateway.core.clientip import client_ip
from gateway.core.errors import GatewayError, NotFound
from gateway.platform import claims
from gateway.platform.models import CredentialClaim


@never_cache
@sensitive_post_parameters("first_code", "second_code")
@require_http_methods(["GET", "POST"])
def credential_claim(request, claim_id: str):
    claim = CredentialClaim.objects.select_related("merchant").filter(claim_id=claim_id).first()
    if claim is None:
        raise Http404("no such claim")
    context = {"claim": claim, "state": claim.state}
    if request.method == "POST":
        try:
            context["values"] = claims.credential_claim_open(
                claim_id=claim_id, first_code=request.POST.get("first_code", ""),
                second_code=request.POST.get("second_code", ""), address=client_ip(request))
        except NotFound:
            raise Http404("no such claim") from None
        except GatewayError as exc:
            context["error"] = exc.message
        claim.refresh_from_db()
        context["state"] = claim.state
    response = render(request, "admin/console/credential_claim.html", context,
                      status=400 if context.get("error") else 200)
    response["Cache-Control"] = "no-store"
    return response
