"""POST /api/v2/payments after the request is checked: the session, its answer, and
X-Idempotency-Key with S2S's semantics (payments.services.idempotency, the one mechanism).

The answer is the interface's six fields plus what SabPaisa's clients read beside them
(`success`, `merchantTxnId`, `amount`, `currency`, `message`, `traceId`; issue 17: the SDK
1.0.1 requires amount, currency and merchantTxnId).

`clientSecret` is shown once and the payment keeps only its hash. A replay of an idempotency
key must answer with the original response, clientSecret included (as Stripe does), so the
stored response carries it Fernet-encrypted under GATEWAY_ENCRYPTION_KEYS, like every other
secret at rest, and only for the key's 24 hours.
"""
from __future__ import annotations

from datetime import timezone as dt_timezone
from typing import Any, Callable

from cryptography.fernet import InvalidToken
from django.utils import timezone

from gateway.core import crypto
from gateway.core.errors import ProcessingError
from gateway.platform.models import Merchant
from gateway.core.tracing import current_trace_id
from payments.models import IdempotencyRecord
from payments.services.hosted.session import HostedSession, hosted_payment_create
from payments.services.idempotency import Lease, Outcome, idempotency_run, request_fingerprint
from tokens.models import Token

CREATED_MESSAGE = "Checkout session created; send the customer to checkoutUrl?clientSecret=<clientSecret>."
_SEALED = "clientSecretEncrypted"  # the stored response's name for the encrypted clientSecret


def hosted_response(session: HostedSession) -> dict:
    """The creation answer: the interface's fields, then SabPaisa's beside them."""
    payment = session.payment
    return {
        "success": True,
        "status": payment.status,
        "sabpaisaTxnId": payment.sabpaisa_txn_id,
        "paymentId": payment.payment_id,
        "checkoutUrl": session.checkout_url,
        "clientSecret": session.client_secret,
        "expiresAt": payment.expires_at.astimezone(dt_timezone.utc).isoformat(timespec="seconds")
                     .replace("+00:00", "Z"),
        "merchantTxnId": payment.merchant_txn_id,
        "amount": payment.amount,
        "currency": payment.currency,
        "message": CREATED_MESSAGE,
        "traceId": current_trace_id(),
    }


def hosted_payment_submit(*, merchant: Merchant, create: dict[str, Any], body: dict, token: Token | None,
                          idempotency_key: str | None, first_use: Callable[[], None] | None = None) -> Outcome:
    """Open the session (hosted_payment_create's keyword arguments in `create`) and answer with
    hosted_response, at most once per idempotency key: the same key and body (but timestamp and
    checksum) answer the original response again, another body is IDEMPOTENCY_MISMATCH, a
    refused request gives its key back. `first_use` runs just before the session is created
    (the checksum's replay check, which may raise). Raises DuplicateTransaction,
    IdempotencyMismatch, ServiceUnavailable."""
    if idempotency_key is None:
        if first_use is not None:
            first_use()
        session = hosted_payment_create(merchant=merchant, token=token, **create)
        return Outcome(200, hosted_response(session), replayed=False)

    def session_create(lease: Lease) -> tuple[int, dict]:
        if first_use is not None:
            first_use()
        # Inside the transaction that stores the response: the session commits with it.
        with lease.transaction():
            session = hosted_payment_create(merchant=merchant, token=token, **create)
            response = _sealed(hosted_response(session))
            lease.store(200, response, payment=session.payment)
        return 200, response

    outcome = idempotency_run(merchant=merchant, key=idempotency_key, fingerprint=request_fingerprint(body),
                              merchant_txn_id=create["merchant_txn_id"], create=session_create)
    return Outcome(outcome.status, _unsealed(outcome.body), outcome.replayed)


def _sealed(response: dict) -> dict:
    sealed = {key: value for key, value in response.items() if key != "clientSecret"}
    sealed[_SEALED] = crypto.encrypt(response["clientSecret"])
    return sealed


def _unsealed(stored: dict) -> dict:
    """The stored response as the merchant gets it. (Not crypto.decrypt, which remembers what
    it decrypted for merchant secrets: a session's secret is read once or twice.) Raises
    ProcessingError when no configured key decrypts it (a key removed within the record's 24
    hours without `reencrypt_secrets`)."""
    response = {key: value for key, value in stored.items() if key != _SEALED}
    try:
        response["clientSecret"] = crypto.fernet().decrypt(stored[_SEALED].encode()).decode()
    except InvalidToken:
        raise ProcessingError("the original response of this X-Idempotency-Key can no longer be read (its "
                              "encryption key was retired); look the session up by enquiry.") from None
    return response


def hosted_replay_secrets_reencrypt() -> tuple[int, int]:
    """Re-encrypt under the first key of GATEWAY_ENCRYPTION_KEYS the clientSecrets kept for
    idempotent replays (`manage.py reencrypt_secrets` runs it beside the merchant secrets).
    Returns (re-encrypted, unreadable); an unreadable one is left as it is and ends with its
    record's 24 hours. Safe to run twice and while serving: a record is rewritten only while it
    still holds the token that was read."""
    changed = unreadable = 0
    records = (IdempotencyRecord.objects.filter(response_body__has_key=_SEALED, expires_at__gt=timezone.now())
               .values_list("pk", "response_body"))
    for pk, body in records.iterator():
        token = body[_SEALED]
        if crypto.is_current(token):
            continue
        try:
            fresh = crypto.reencrypt(token)
        except InvalidToken:
            unreadable += 1
            continue
        changed += IdempotencyRecord.objects.filter(pk=pk, **{f"response_body__{_SEALED}": token}).update(
            response_body={**body, _SEALED: fresh})
    return changed, unreadable
