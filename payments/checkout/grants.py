"""Which payments this browser may see: the grants its session holds, each given when the
customer arrived with the payment's clientSecret or link (payments.checkout.access). Read also
by payments.checkout.language: the merchant's language is shown only to a browser holding the
grant."""
from __future__ import annotations

SESSION_GRANTS = "checkout_grants"
MAX_GRANTS = 20


def grant(request, payment_id: str) -> None:
    """This browser may see `payment_id` (the latest MAX_GRANTS payments are kept)."""
    grants = [pid for pid in request.session.get(SESSION_GRANTS, []) if pid != payment_id]
    request.session[SESSION_GRANTS] = (grants + [payment_id])[-MAX_GRANTS:]


def has_grant(request, payment_id: str) -> bool:
    return payment_id in request.session.get(SESSION_GRANTS, [])
