"""How many times one checkout session may make the acquirer work (issue 28).

The processor's allowance is shared by every merchant we serve (payments.acquirer.limits), so
one customer's tab must not spend it: looping "pay by UPI" and "change method", reloading the
bank-transfer page or the return from the acquirer's page each cost a call. Every call the
customer's checkout makes of the acquirer is counted twice in Redis, against the session
(CHECKOUT_ACQUIRER_CALLS_PER_SESSION) and against the payment's current attempt
(CHECKOUT_ACQUIRER_CALLS_PER_ATTEMPT). Past either, CallBudgetSpent is raised before the call:
no call is made, nothing is written, and the checkout shows its calm page
(payments.checkout.views.calm_page). A call here is one of the Acquirer protocol (one start,
one status query, one account): what it costs at the processor is the acquirer's business,
so the budget is the same for every acquirer, the sandbox included (staging shows what
production will).

Page views never ask the acquirer again for what it said a moment ago: `answer_kept` keeps
an answer per payment, attempt and question for CHECKOUT_ACQUIRER_ANSWER_SECONDS
(docs/going-live.md says why that long).

Only the customer's checkout is counted: the payments sweep, webhooks and S2S calls have their
own bounds (the sweep's batch, the account's outbound limit). Redis unreachable: the budget is
not applied (logged), and the outbound limit still holds the account.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from gateway.core import redisguard
from gateway.core.errors import RateLimited
from gateway.platform.ratelimit import window_hit
from payments.models import Payment

logger = logging.getLogger("payments.hosted")

T = TypeVar("T")

# A session's counters outlive its longest life: a bank transfer stays open 72 hours
# (payments.services.hosted.banks.TRANSFER_VALIDITY), and a day more covers its sweep.
_COUNTER_SECONDS = 4 * 24 * 3600
_OUTAGE = redisguard.OUTAGE_ERRORS + (redisguard.RedisUnavailable,)


class CallBudgetSpent(RateLimited):
    """The session (`scope` "session") or its attempt ("attempt") has used its acquirer calls:
    none was made. Retry-After: when the session ends, or when a kept answer would be asked
    again."""

    def __init__(self, scope: str, retry_after: int):
        super().__init__(f"this checkout has asked the bank too often ({scope})",
                         headers={"Retry-After": str(max(1, int(retry_after)))})
        self.scope = scope


def checkout_call_take(payment: Payment, *, new_attempt: bool = False) -> None:
    """Count one acquirer call of `payment`'s checkout, about to be made, against its session
    and its attempt (`new_attempt`: the call starts the next attempt, which the caller moves
    to after this check). Raises CallBudgetSpent, and then the call must not be made."""
    attempt = payment.attempt + (1 if new_attempt else 0)
    keys = ((f"ckb:s:{payment.payment_id}", settings.CHECKOUT_ACQUIRER_CALLS_PER_SESSION, "session"),
            (f"ckb:a:{payment.payment_id}:{attempt}", settings.CHECKOUT_ACQUIRER_CALLS_PER_ATTEMPT, "attempt"))
    try:
        for key, allowed, scope in keys:
            if window_hit(key, _COUNTER_SECONDS) > allowed:
                raise CallBudgetSpent(scope, _retry_after(payment, scope))
    except _OUTAGE as exc:
        if not isinstance(exc, redisguard.RedisUnavailable):  # that one was logged when it failed
            logger.warning("checkout call budget not applied: Redis is unreachable (%s)", type(exc).__name__)


def _retry_after(payment: Payment, scope: str) -> int:
    if scope == "attempt":
        return settings.CHECKOUT_ACQUIRER_ANSWER_SECONDS
    return int((payment.expires_at - timezone.now()).total_seconds()) if payment.expires_at else 60


def _answer_key(payment: Payment, question: str) -> str:
    return f"cka:{payment.payment_id}:{payment.attempt}:{question}"


def answer_kept(payment: Payment, question: str, ask: Callable[[], T]) -> T:
    """The acquirer's answer to `question` about `payment`'s current attempt: the one kept from
    the last CHECKOUT_ACQUIRER_ANSWER_SECONDS, else `ask()` (a counted call,
    checkout_call_take), kept for that long. An exception of `ask` is not kept. Raises
    CallBudgetSpent, and what `ask` raises."""
    key = _answer_key(payment, question)
    try:
        kept = cache.get(key)
    except _OUTAGE:
        kept = None
    if kept is not None:
        return kept
    checkout_call_take(payment)
    answer = ask()
    answer_keep(payment, question, answer)
    return answer


def answer_keep(payment: Payment, question: str, answer) -> None:
    """Keep `answer` (picklable, not None) as the acquirer's latest to `question` about
    `payment`'s current attempt, for CHECKOUT_ACQUIRER_ANSWER_SECONDS."""
    try:
        cache.set(_answer_key(payment, question), answer, settings.CHECKOUT_ACQUIRER_ANSWER_SECONDS)
    except _OUTAGE:
        pass


def answer_recent(payment: Payment, question: str) -> bool:
    """Whether an answer to `question` about `payment`'s current attempt is kept."""
    try:
        return cache.get(_answer_key(payment, question)) is not None
    except _OUTAGE:
        return False
