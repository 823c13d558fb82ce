"""UPI links and paying them: shared by S2S (QR / intent) and hosted checkout (collect, QR).

- `upi_link(payment)` is the `upi://pay?...` deep link of a payment (CONTRACT.md, Sandbox):
  `pa` our collection VPA, `pn` the merchant's name, `am` rupees with two decimals, `cu` INR,
  `tr` the payment's sabpaisaTxnId, `tn` a short note; every value percent-encoded.
- `upi_pay(payment_id=, payer_vpa=)` is a UPI app paying a payment: the sandbox UPI app, or
  the hosted page's collect request. It claims the payment for one payer, asks the acquirer
  with no lock held, and records the answer through payments.services.transitions.
- `upi_pay_link(upi_uri=, payer_vpa=)` reads a link the way a UPI app does, checks it against
  the payment it names, then pays it.

What the acquirer does while its answer is awaited is the acquirer's own business: a PENDING
answer is recorded and nothing more is asked of it. Its final answer comes by its notice (the
inbound door), by its status query (upi_unanswered_reconcile), or, for the sandbox, by its
payer's bank (payments.acquirer.sandbox.payer: success@sandbox approved after a delay,
timeout@sandbox left to expire). An approval that finds the payment EXPIRED or FAILED is
logged, kept with its RRN and reversed (payments.services.upi_approval).
"""
from __future__ import annotations

import logging
import re
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from urllib.parse import parse_qsl, quote, urlsplit

from django.conf import settings
from django.db.models.functions import Now
from django.utils import timezone
from django.utils.module_loading import import_string

from gateway.core.errors import PaymentFailed, ProcessingError, ServiceUnavailable, ValidationError
from gateway.core.money import paise_to_rupees, rupees_str
from gateway.core.transactions import ensure_no_transaction
from payments.acquirer import IMPLEMENTATIONS, acquirer_for, enabled
from payments.acquirer.base import AcquirerError, AcquirerRefused, AcquirerUnavailable, Outcome
from payments.models import Payment, PaymentEvent
from payments.services.acquirer_answers import (
    STATUS_QUERY_AFTER,
    acquirer_answer_record,
    acquirer_return_url,
    status_queries_run,
)
from payments.services.call_budget import CallBudgetSpent, checkout_call_take
from payments.services.reversals import payment_late_approval_handle
from payments.services.transitions import (
    payment_expire,
    payment_note,
    payment_attempt_abandon,
    payment_attempt_failed,
    payment_mark_processing,
)
from payments.services.acquirer_methods import acquirer_for_method
from payments.services.routing import routed_answer, routed_call
from payments.services.upi_approval import upi_approval_record
from payments.state import InvalidTransition

logger = logging.getLogger("payments.upi")

S = Payment.Status
M = Payment.Mode

# The gateway collects every UPI payment into one VPA of its acquirer; `tr` tells the payments
# apart. The sandbox's collection VPA is the default; a real acquirer's is set in settings.
DEFAULT_PAYEE_VPA = "gateway@sandbox"
# UPI apps show `pn` and `tn` on one line each; longer values are cut.
PAYEE_NAME_MAX = 50
NOTE_MAX = 50
# A VPA is "handle@provider" (NPCI): letters, digits, dot, hyphen, underscore before the @.
VPA_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{1,255}@[a-z][a-z0-9.-]{1,63}$")
UPI_URI_MAX = 2000


def payee_vpa() -> str:
    return getattr(settings, "UPI_PAYEE_VPA", "") or DEFAULT_PAYEE_VPA


def _encode(value: str) -> str:
    # %20 for spaces (not "+", which some UPI apps show literally); "@" stays readable in pa.
    return quote(value, safe="@")


def upi_note(payment: Payment) -> str:
    return (payment.description or f"Payment {payment.merchant_txn_id}")[:NOTE_MAX]


def upi_link(payment: Payment) -> str:
    """The `upi://pay?...` deep link of `payment` (used as upiQrString and intentUrl)."""
    params = (
        ("pa", payee_vpa()),
        ("pn", payment.merchant.name[:PAYEE_NAME_MAX]),
        ("am", rupees_str(payment.amount)),
        ("cu", payment.currency),
        ("tr", payment.sabpaisa_txn_id),
        ("tn", upi_note(payment)),
    )
    return "upi://pay?" + "&".join(f"{name}={_encode(value)}" for name, value in params)


# --- reading a link, as a UPI app does -------------------------------------------------------

def upi_link_parse(upi_uri) -> dict[str, str]:
    """The parameters of a `upi://pay?...` link. Raises ValidationError(field="upiUri") when
    it is not one, or a parameter a payment needs (pa, am, cu, tr) is missing or repeated."""
    if not isinstance(upi_uri, str) or not upi_uri.strip():
        raise ValidationError("must be a upi://pay link", field="upiUri")
    upi_uri = upi_uri.strip()
    if len(upi_uri) > UPI_URI_MAX:
        raise ValidationError(f"must be at most {UPI_URI_MAX} characters", field="upiUri")
    parts = urlsplit(upi_uri)
    if parts.scheme.lower() != "upi" or parts.netloc.lower() != "pay" or parts.path not in ("", "/"):
        raise ValidationError("must be a upi://pay link", field="upiUri")
    try:
        pairs = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise ValidationError("has a malformed query string", field="upiUri") from None
    params: dict[str, str] = {}
    for name, value in pairs:
        if name in params:
            raise ValidationError(f"has the parameter {name} twice", field="upiUri")
        params[name] = value
    for name in ("pa", "am", "cu", "tr"):
        if not params.get(name):
            raise ValidationError(f"has no {name} parameter", field="upiUri")
    return params


def upi_pay_link(*, upi_uri, payer_vpa) -> Payment:
    """Pay the payment a UPI link names, from `payer_vpa`, after checking the link as a UPI app
    would: our payee VPA, INR, and the payment's own amount. Raises ValidationError
    (upiUri / payerVpa) for anything a UPI app would refuse, then whatever `upi_pay` raises."""
    vpa = _clean_vpa(payer_vpa)
    params = upi_link_parse(upi_uri)
    if params["pa"].lower() != payee_vpa().lower():
        raise ValidationError(f"pays {params['pa']}, which is not this gateway's VPA", field="upiUri")
    if params["cu"] != "INR":
        raise ValidationError("currency (cu) must be INR", field="upiUri")
    payment = Payment.objects.filter(sabpaisa_txn_id=params["tr"]).only("pk", "amount").first()
    if payment is None:
        raise ValidationError("names no payment of this gateway (tr)", field="upiUri")
    try:
        amount = Decimal(params["am"])
    except InvalidOperation:
        raise ValidationError("amount (am) is not a number", field="upiUri") from None
    if not amount.is_finite() or amount != paise_to_rupees(payment.amount):
        raise ValidationError("amount (am) does not match the payment", field="upiUri")
    return upi_pay(payment_id=payment.pk, payer_vpa=vpa)


# --- paying ----------------------------------------------------------------------------------

def _clean_vpa(payer_vpa) -> str:
    if not isinstance(payer_vpa, str) or not payer_vpa.strip():
        raise ValidationError("is required", field="payerVpa")
    vpa = payer_vpa.strip().lower()
    if not VPA_PATTERN.match(vpa):
        raise ValidationError("is not a VPA (name@provider)", field="payerVpa")
    return vpa


def _ensure_open(payment: Payment) -> None:
    if payment.is_final:
        raise ValidationError(f"the payment is already {payment.status}", field="upiUri")
    if payment.expires_at <= timezone.now():
        # Its deadline has passed: make it final now rather than at the next sweep.
        payment_expire(payment_id=payment.pk)
        raise ValidationError("the payment has expired", field="upiUri")


def _claim(payment: Payment, vpa: str) -> Payment:
    """Make `vpa` the one payer of `payment`. A PENDING (hosted) payment moves to PROCESSING
    with mode UPI; a PROCESSING UPI payment is claimed by a conditional update, so two UPI
    apps racing on one link cannot both pay it."""
    if payment.status == S.PENDING:
        try:
            return payment_mark_processing(payment_id=payment.pk, payment_mode=Payment.Mode.UPI,
                                           payer_vpa=vpa, detail={"method": "UPI", "via": "upi", "payerVpa": vpa})
        except InvalidTransition:  # another UPI app or method got there first
            payment.refresh_from_db()
            _ensure_open(payment)
    if payment.payment_mode != Payment.Mode.UPI:
        raise ValidationError("the payment is being paid by another method", field="upiUri")
    # Not a status change: payer_vpa is written once, and only while the payment is open.
    claimed = (Payment.objects
               .filter(pk=payment.pk, status=S.PROCESSING, payment_mode=Payment.Mode.UPI, payer_vpa="")
               .update(payer_vpa=vpa, updated_at=Now()))
    payment.refresh_from_db()
    if claimed:
        return payment
    _ensure_open(payment)
    raise ValidationError("a UPI app is already paying this payment", field="upiUri")


def upi_pay(*, payment_id: int, payer_vpa) -> Payment:
    """A UPI app pays payment `payment_id` from `payer_vpa`. Call it outside any transaction.

    Accepts a PENDING payment (hosted: it first moves to PROCESSING with mode UPI) or a
    PROCESSING UPI payment nobody has paid yet (S2S). The acquirer is asked with no lock held.
    A decline makes the payment FAILED at once; an approval pending makes it SUCCESS later
    (the sandbox's payer's bank approves success@sandbox after
    SANDBOX_UPI_SUCCESS_DELAY_SECONDS, never timeout@sandbox, which expires).
    Returns the payment as it stands after the call.

    Raises RuntimeError inside a transaction (gateway.core.transactions).
    Raises ValidationError: payerVpa for a missing, malformed or (sandbox) unknown VPA;
    upiUri for an unknown, expired, final or already claimed payment. PaymentFailed,
    ServiceUnavailable or ProcessingError when the acquirer cannot take it (the payer's claim
    is released, so the customer may try again). CallBudgetSpent before anything for a hosted
    payment whose checkout has asked the acquirer too often (payments.services.call_budget)."""
    ensure_no_transaction()
    vpa = _clean_vpa(payer_vpa)
    payment = Payment.objects.select_related("merchant").filter(pk=payment_id).first()
    if payment is None:
        raise ValidationError("names no payment of this gateway", field="upiUri")
    _ensure_open(payment)
    # The acquirer the request goes to: the payment's own, or the first of its merchant's UPI
    # route (read without taking the rotation's probe). Never failed over: a request whose
    # answer was lost may already be in the payer's app (payments.services.routing).
    acquirer = acquirer_for_method(payment, M.UPI)
    try:
        vpa = acquirer.upi_vpa_check(vpa)
    except ValueError as exc:  # a VPA this acquirer takes no request from (the sandbox's: not a test VPA)
        raise ValidationError(str(exc), field="payerVpa") from None
    if payment.flow == Payment.Flow.HOSTED:  # a customer's checkout: its call budget
        checkout_call_take(payment, new_attempt=payment.status == S.PENDING)
    payment = _claim(payment, vpa)

    try:
        answer = routed_answer(routed_call(payment, M.UPI, lambda acquirer: acquirer.upi_pay(
            payment=payment, payer_vpa=vpa, return_url=acquirer_return_url(payment)), step="upi_pay",
            bound_to=acquirer.name))
    except ValueError as exc:
        # The claim stays: the payment remains PROCESSING until it expires (or the status query
        # of upi_unanswered_reconcile finds the acquirer never took it).
        raise ValidationError(str(exc), field="payerVpa") from None
    except AcquirerError as exc:
        # The acquirer took nothing: give the claim back so the customer can try again.
        _release_claim(payment, vpa)
        logger.warning("acquirer could not take UPI payment %s: %s", payment.sabpaisa_txn_id, exc)
        if isinstance(exc, AcquirerRefused):
            raise PaymentFailed() from None
        raise (ServiceUnavailable if isinstance(exc, AcquirerUnavailable) else ProcessingError)() from None
    return _follow_answer(payment, vpa, answer, step="upi_pay")


def _follow_answer(payment: Payment, vpa: str, answer, *, step: str) -> Payment:
    """Record the acquirer's answer about `vpa`'s pay request and act on it: a decline makes
    the payment FAILED, an approval SUCCESS; a pending answer is only recorded (the acquirer's
    final answer comes later, the module's docstring). Returns the payment as it then stands."""
    acquirer_answer_record(payment_id=payment.pk, step=step, answer=answer, attempt=_attempt_of(payment))
    if answer.outcome == Outcome.DECLINED:
        # S2S: FAILED. Hosted: a failed attempt, and the customer may choose again.
        try:
            return payment_attempt_failed(payment_id=payment.pk, reason=answer.message or "declined by the payer",
                                          attempt=_attempt_of(payment), detail={"payerVpa": vpa, **answer.raw})
        except InvalidTransition:  # it expired meanwhile, or the customer left it: that stands
            payment.refresh_from_db()
            return payment
    if answer.outcome == Outcome.APPROVED:
        return (upi_approval_record(payment_id=payment.pk, bank_rrn=answer.reference, step=step,
                                    attempt=_attempt_of(payment))
                or Payment.objects.get(pk=payment.pk))
    payment.refresh_from_db()
    return payment


def _attempt_of(payment: Payment) -> int | None:
    """The hosted attempt an answer about `payment` belongs to (None for S2S, which has one)."""
    return payment.attempt if payment.flow == Payment.Flow.HOSTED else None


def _release_claim(payment: Payment, vpa: str) -> bool:
    """Give `vpa`'s claim on the payment back (the acquirer took no request), so another UPI
    app, or the same one again, can pay it. Only while it is open and still that payer's."""
    return bool(Payment.objects.filter(pk=payment.pk, status=S.PROCESSING, payer_vpa=vpa)
                .update(payer_vpa="", updated_at=Now()))


ANSWER_STEPS = ("upi_pay", "upi_status")
NO_SUCH_REQUEST = "no such request"


def _reconcile_one(payment_id: int, vpa: str) -> None:
    """Ask the acquirer about `vpa`'s cut-off pay request for the payment and act on the answer."""
    payment = Payment.objects.select_related("merchant").get(pk=payment_id)
    try:
        answer = acquirer_for(payment).upi_status(payment=payment, payer_vpa=vpa)
    except AcquirerRefused as exc:
        _release_claim(payment, vpa)
        payment_note(payment_id=payment_id, kind=PaymentEvent.Kind.ACQUIRER,
                     detail={"step": "upi_status", "outcome": NO_SUCH_REQUEST, "message": str(exc),
                             "payerVpa": vpa, "result": "claim released"})
        logger.warning("UPI payment %s: the acquirer has no such pay request; the payer may pay again",
                       payment.sabpaisa_txn_id)
        return
    except AcquirerError as exc:  # unavailable: asked again a period later
        logger.warning("UPI payment %s: status query failed: %s", payment.sabpaisa_txn_id, exc)
        return
    # The payer's VPA stays in the payment's story, not in the log.
    logger.info("UPI payment %s: status of the cut-off pay request: %s", payment.sabpaisa_txn_id, answer.outcome.value)
    _follow_answer(payment, vpa, answer, step="upi_status")


def upi_cut_off_requests(now):
    """The payments whose claimed pay request has no recorded answer, STATUS_QUERY_AFTER
    after the claim (or the last status query), or whose deadline has passed (the expiry that
    follows must not end a payment the bank may have answered: it is asked first), oldest
    first. Read through the partial index payment_upi_claimed: only claimed, open UPI payments;
    with an acquirer whose PENDING answers end only by its notice, also the unclaimed ones
    paid by its link (hosted_upi_intent, S2S)."""
    from django.db.models import Exists, OuterRef, Q

    # An answer to this claim; a released claim's note is not one (the payer may claim again).
    answered = (PaymentEvent.objects.filter(payment=OuterRef("pk"), kind=PaymentEvent.Kind.ACQUIRER,
                                            detail__step__in=ANSWER_STEPS)
                .exclude(detail__outcome=NO_SUCH_REQUEST))
    due = (Payment.objects
           .filter(Q(updated_at__lte=now - STATUS_QUERY_AFTER) | Q(expires_at__lte=now),
                   status=S.PROCESSING, payment_mode=Payment.Mode.UPI))
    # An acquirer whose final word on a PENDING request comes only by its own notice (a webhook,
    # which can be lost) is asked about a request it answered PENDING each period too, and about
    # its links (hosted by app or QR, S2S), which are paid in the payer's app with no claim of
    # ours (payer_vpa stays empty): else a lost notice would leave them to expire with the money
    # moved. Each payment by its own acquirer's rule (payments.acquirer.acquirer_for).
    asking = _asking_while_pending()
    if asking is None:  # none of the acquirers in use: only the claimed ones (their index)
        return due.exclude(Exists(answered)).exclude(payer_vpa="").order_by("pk")
    final = answered.exclude(detail__outcome=Outcome.PENDING.value)
    if asking is True:  # every acquirer in use
        return due.exclude(Exists(final)).order_by("pk")
    return due.filter((asking & ~Exists(final)) | (~asking & ~Exists(answered) & ~Q(payer_vpa=""))).order_by("pk")


def _asking_while_pending():
    """Which payments' acquirers ask about a PENDING request each period
    (Acquirer.status_query_while_pending): True when every acquirer in use does, None when none
    does, else the condition on Payment.acquirer (empty: the configured one)."""
    from django.db.models import Q

    in_use = set(enabled()) | {settings.GATEWAY_ACQUIRER}
    names = sorted(name for name in IMPLEMENTATIONS
                   if import_string(IMPLEMENTATIONS[name].adapter).status_query_while_pending)
    if in_use <= set(names):
        return True
    if not in_use & set(names):
        return None
    condition = Q(acquirer__in=names)
    return condition | Q(acquirer="") if settings.GATEWAY_ACQUIRER in names else condition


# A final answer (the bank declined, or approved) recorded for a claimed pay request.
FINAL_OUTCOMES = (Outcome.DECLINED.value, Outcome.APPROVED.value)


def upi_answered_unfollowed(now=None):
    """Open, claimed UPI payments with a final answer of the acquirer recorded (upi_pay's or
    the status query's) that nothing followed: the process that recorded it was killed before
    the status change it called for. Oldest first, among selectors.upi_claimed_open_ids."""
    from django.db.models import Exists, OuterRef

    from payments.selectors import upi_claimed_open_ids

    claimed = upi_claimed_open_ids()
    final = PaymentEvent.objects.filter(payment=OuterRef("pk"), kind=PaymentEvent.Kind.ACQUIRER,
                                        detail__step__in=ANSWER_STEPS, detail__outcome__in=FINAL_OUTCOMES)
    return (Payment.objects.filter(pk__in=claimed, status=S.PROCESSING)  # still open: a second statement
            .filter(Exists(final)).order_by("pk"))


def upi_answers_follow(*, limit: int = 100) -> int:
    """Follow the final answers the acquirer gave that were recorded but never acted on
    (upi_answered_unfollowed): a decline makes the payment FAILED (hosted: a failed attempt),
    an approval SUCCESS with its RRN, as upi_pay would have. The payments sweep runs it before
    it expires anything, so the bank's answer wins over the deadline (issue 29: a worker
    killed between recording a decline and failing the payment left it to expire, and the
    merchant heard EXPIRED). A hosted answer counts only for the payment's current attempt.
    Following twice changes nothing (the transitions and the approval's RRN are checked under
    the payment's lock). Returns how many payments it followed."""
    followed = 0
    for payment in upi_answered_unfollowed().select_related("merchant")[:limit]:
        answers = [e.detail for e in PaymentEvent.objects.filter(
            payment=payment, kind=PaymentEvent.Kind.ACQUIRER, detail__step__in=ANSWER_STEPS,
            detail__outcome__in=FINAL_OUTCOMES).order_by("-pk")]
        attempt = _attempt_of(payment)
        answer = next((a for a in answers if attempt is None or a.get("attempt") == attempt), None)
        if answer is None:
            continue
        followed += 1
        if answer["outcome"] == Outcome.DECLINED.value:
            try:
                payment_attempt_failed(payment_id=payment.pk, reason=answer.get("message") or "declined by the payer",
                                       attempt=attempt, detail={"payerVpa": payment.payer_vpa,
                                                                "source": "recorded answer, followed by the sweep"})
            except InvalidTransition:  # followed meanwhile, or the attempt is over
                pass
        elif answer.get("reference"):
            upi_approval_record(payment_id=payment.pk, bank_rrn=answer["reference"], step=answer["step"],
                                attempt=attempt)
        logger.warning("UPI payment %s: the acquirer's %s answer was recorded but not followed; followed now",
                       payment.sabpaisa_txn_id, answer["outcome"])
    return followed


def upi_unanswered_reconcile(*, now=None, limit: int = 100) -> int:
    """Ask the acquirer where each cut-off UPI pay request stands, and act on its answer.

    A pay request is cut off when the payer's claim committed (payer_vpa set, the payment
    PROCESSING in mode UPI) but no answer of the acquirer was recorded, STATUS_QUERY_AFTER
    since: the web process, or the database, went down between the call and the record.
    upi_pay never asks twice, so without this the payment waits for its expiry while the
    customer's retries are refused. The acquirer's status answer is recorded (step
    upi_status) and followed as upi_pay's would be; a request it never got gives the claim
    back, so the customer can pay again. An acquirer whose PENDING answers end only by its
    own notice (a webhook, which may be lost) says so with `status_query_while_pending`
    (RealAcquirer does): its requests answered PENDING are asked about each period too,
    until they are final. One sweep asks about a payment once a period: each is taken by a
    conditional update first. Returns how many were asked."""
    now = now or timezone.now()
    due = list(upi_cut_off_requests(now).values_list("pk", "payer_vpa", "updated_at")[:limit])
    # Taken for this period: a concurrent sweep finds updated_at moved and passes it by.
    return status_queries_run(
        due, what="UPI pay request",
        take=lambda row: bool(Payment.objects.filter(pk=row[0], status=S.PROCESSING, payer_vpa=row[1],
                                                     updated_at=row[2]).update(updated_at=Now())),
        ask=lambda row: _reconcile_one(row[0], row[1]))


# --- hosted UPI by app (intent) or QR -------------------------------------------------------

INTENT_STEP = "upi_intent"


def hosted_upi_intent(*, payment_id: int) -> Payment:
    """Hosted: the customer pays by a UPI app, by its intent on a phone or a QR of the same link
    on a wide screen (NPCI's replacement for Collect from 28 February 2026). Call it outside any
    transaction. The payment moves PENDING -> PROCESSING in mode UPI with no payer yet (its next
    attempt, committed), then, with no lock held, the acquirer gives the attempt's link
    (Acquirer.upi_intent: its own for a real acquirer, once per attempt; the gateway's own for
    the sandbox), recorded in the payment's story (step upi_intent, `upi_link`), where the
    waiting page reads it (upi_intent_of). Its final answer comes as for any UPI request: the
    acquirer's notice or its status query (upi_unanswered_reconcile), the sandbox's UPI app.
    Raises InvalidTransition when the payment is not PENDING; PaymentFailed, ServiceUnavailable
    or ProcessingError when the acquirer gave no link (the attempt is given back: PENDING, and
    not counted as a failure); CallBudgetSpent before anything when the checkout has asked the
    acquirer too often (payments.services.call_budget)."""
    ensure_no_transaction()
    checkout_call_take(Payment.objects.get(pk=payment_id), new_attempt=True)
    payment = payment_mark_processing(payment_id=payment_id, payment_mode=Payment.Mode.UPI,
                                      detail={"method": "UPI", "via": "intent"})
    payment = Payment.objects.select_related("merchant").get(pk=payment.pk)
    try:
        answer = routed_answer(routed_call(payment, "UPI", lambda acquirer: acquirer.upi_intent(
            payment=payment, return_url=acquirer_return_url(payment)), step="upi_intent"))
    except AcquirerError as exc:
        logger.warning("acquirer gave no UPI link for payment %s: %s", payment.sabpaisa_txn_id, type(exc).__name__)
        payment_attempt_abandon(payment_id=payment.pk, modes=(Payment.Mode.UPI,),
                                reason="the acquirer gave no UPI link")
        if isinstance(exc, AcquirerRefused):
            raise PaymentFailed() from None
        raise (ServiceUnavailable if isinstance(exc, AcquirerUnavailable) else ProcessingError)() from None
    link = answer.link or upi_link(payment)
    acquirer_answer_record(payment_id=payment.pk, step=INTENT_STEP, attempt=payment.attempt,
                           answer=replace(answer, raw={**answer.raw, "upi_link": link}))
    payment.refresh_from_db()
    return payment


def upi_intent_of(payment: Payment) -> dict | None:
    """The link the waiting page shows for the payment's current UPI attempt by app or QR:
    {"link": upi://pay..., "apps": {app name: link}}; None when the attempt is not one (a
    Collect request, or not PROCESSING in UPI)."""
    if payment.status != S.PROCESSING or payment.payment_mode != Payment.Mode.UPI or payment.payer_vpa:
        return None
    event = (payment.events.filter(kind=PaymentEvent.Kind.ACQUIRER, detail__step=INTENT_STEP,
                                   detail__attempt=payment.attempt).order_by("-pk").first())
    if event is None:
        return None
    link, apps = event.detail.get("upi_link") or "", event.detail.get("upi_apps") or {}
    return {"link": link, "apps": apps if isinstance(apps, dict) else {}} if link else None


def upi_change_method(*, payment: Payment) -> Payment:
    """Hosted: the customer leaves the UPI request waiting for their app to choose another
    method. PROCESSING (UPI) -> PENDING first (committed, payments.services.transitions), then,
    with no lock held, the acquirer is asked to cancel the request. A request it can no longer
    cancel may still be approved in the customer's app: that late approval finds its attempt
    over and is reversed (payment_late_approval_handle), so the customer is never
    charged twice. Returns the payment, PENDING. Raises InvalidTransition when it is not
    waiting for a UPI app. A checkout that has asked the acquirer too often
    (payments.services.call_budget) leaves the request without asking: the customer is not
    kept waiting for an app, and a late approval is reversed as above."""
    before, payment = payment_attempt_abandon(payment_id=payment.pk, modes=(Payment.Mode.UPI,),
                                              reason="the customer chose another method")
    if not before.payer_vpa:
        return payment  # the QR was shown, nobody had paid it: no request to cancel
    try:
        checkout_call_take(before)
    except CallBudgetSpent:
        payment_note(payment_id=payment.pk, kind=PaymentEvent.Kind.ACQUIRER,
                     detail={"step": "upi_cancel", "outcome": "not asked", "attempt": before.attempt,
                             "error": "CallBudgetSpent"})
        return payment
    try:
        answer = acquirer_for(before).upi_cancel(payment=before, payer_vpa=before.payer_vpa)
    except AcquirerError as exc:
        # The request may still be approved; its approval then finds the attempt over.
        logger.warning("UPI payment %s: the left request could not be cancelled: %s", payment.sabpaisa_txn_id,
                       type(exc).__name__)
        payment_note(payment_id=payment.pk, kind=PaymentEvent.Kind.ACQUIRER,
                     detail={"step": "upi_cancel", "outcome": "no answer", "attempt": before.attempt,
                             "error": type(exc).__name__})
        return payment
    acquirer_answer_record(payment_id=payment.pk, step="upi_cancel", answer=answer, attempt=before.attempt)
    if answer.outcome == Outcome.APPROVED:  # approved before it could be cancelled
        payment_late_approval_handle(payment_id=payment.pk, step="upi_cancel", bank_rrn=answer.reference,
                                     abandoned=True)
    return payment

