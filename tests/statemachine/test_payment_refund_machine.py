"""A Hypothesis state machine of payments and refunds, driven through the services on the real
PostgreSQL (no HTTP, no mocks; the sandbox acquirer answers as CONTRACT.md says).

Random sequences of:
- creation, both flows (hosted sessions; S2S UPI payments, the sandbox's start failures too);
- what customers and banks do: card with a 3-D Secure challenge and the right or a wrong OTP, a
  declined card, UPI from success@ / failure@ / timeout@sandbox and the approval arriving (the
  task, or the sweep standing in for a lost one), net banking or a wallet approved or declined,
  NEFT / RTGS / challan started and the transfer received, the customer cancelling;
- the clock: a payment's deadline passes (expires_at set in the past), then its expiry task
  (payment_expire), the sweep (payments_expire_due), or whatever the customer does next finds it;
- refunds of random amounts (none, the remaining amount, one paisa more, too small, the
  sandbox's failing amount, on payments that are not SUCCESS, repeated refundIds), and the
  bank's answer to them.

After every step, against the database:
- every PaymentEvent and RefundEvent status change is in payments.state / refunds.state
  TRANSITIONS, and each payment's and refund's events chain from its creation to its status;
- a payment enters a final status at most once, and a final payment has exactly one webhook
  event (of its status), an open one none; likewise one refund.* event per final refund;
- the non-FAILED refunds of a payment never sum to more than its paid amount, and only SUCCESS
  payments have refunds; every payment's refund totals (its columns) are the sums of its refunds;
- every status is the one a small model of the rules predicts, and every call raised exactly
  the error the model expected (or none).

Bounded for `scripts/test` (derandomized); docs/testing.md has the long run.
"""
from __future__ import annotations

import itertools
import os
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta

import pytest
from django.conf import settings as django_settings
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

from gateway.core.errors import (
    GatewayError,
    DuplicateRefund,
    PaymentFailed,
    ProcessingError,
    RefundAmountExceeded,
    RefundNotAllowed,
    ServiceUnavailable,
    ValidationError,
)
from gateway.platform.methods import methods_for_amount
from payments.cards import CardInput
from payments.models import Payment, PaymentEvent
from payments.services import hosted
from payments.services.acquirer_methods import acquirer_methods
from payments.services.expiry import payments_expire_due
from payments.services.s2s import s2s_payment_create
from payments.services.transitions import payment_expire
from payments.sandbox_upi.approvals import upi_sandbox_approvals_due, upi_sandbox_approve
from payments.services.upi import upi_pay
from payments.state import TRANSITIONS as PAYMENT_TRANSITIONS
from payments.state import InvalidTransition
from refunds.models import Refund, RefundEvent
from refunds.payloads import EVENT_TYPES as REFUND_EVENT_TYPES
from refunds.selectors import payments_with_refund_totals_off
from refunds.services import REFUND_MIN_AMOUNT, refund_create, refund_submit
from refunds.state import TRANSITIONS as REFUND_TRANSITIONS
from tests.support.factories import make_merchant
from webhooks.models import WebhookEvent

EXAMPLES = int(os.environ.get("STATEMACHINE_EXAMPLES", "20"))
STEPS = int(os.environ.get("STATEMACHINE_STEPS", "30"))
DERANDOMIZE = os.environ.get("FUZZ_DERANDOMIZE", "1") != "0"

S = Payment.Status
R = Refund.Status
FINAL = set(Payment.FINAL_STATUSES)
M = Payment.Mode

CHALLENGE_CARDS = ["4111111111111111", "5555555555554444"]
DECLINED_CARD = "4000000000000002"
RIGHT_OTP, WRONG_OTP = "123456", "000000"
SUCCESS_VPA, FAILURE_VPA, TIMEOUT_VPA = "success@sandbox", "failure@sandbox", "timeout@sandbox"
S2S_START_FAILURES = {100001: PaymentFailed, 100002: ServiceUnavailable, 100003: ProcessingError}
REFUND_FAILING_AMOUNT = getattr(django_settings, "SANDBOX_REFUND_FAILURE_AMOUNT", 100013)

payment_amounts = st.one_of(st.sampled_from([100, 101, REFUND_FAILING_AMOUNT, 250_000]),
                            st.integers(min_value=100, max_value=2_000_000))
s2s_amounts = st.one_of(st.sampled_from(sorted(S2S_START_FAILURES)), payment_amounts)
# How much a refund asks for: absent (the whole remaining amount), relative to what remains, or
# a number of paise.
refund_asks = st.one_of(
    st.none(),
    st.sampled_from(["remaining", "remaining + 1", "half", "below the minimum", "zero"]),
    st.sampled_from([1, 99, 100, REFUND_FAILING_AMOUNT]),
    st.integers(min_value=1, max_value=3_000_000),
)

merchant_refund_ids = st.sampled_from([None, None, "R-1", "R-2", "R-3"])  # merchant-chosen, sometimes repeated


@dataclass
class ModelPayment:
    pk: int
    txn_id: str
    flow: str
    amount: int
    status: str
    mode: str = ""
    vpa: str = ""
    overdue: bool = False           # expires_at is in the past
    transfer_reference: str = ""
    failed_attempts: int = 0        # hosted: the third failed attempt ends the payment

    @property
    def open(self) -> bool:
        return self.status not in FINAL


@dataclass
class ModelRefund:
    pk: int
    payment_pk: int
    amount: int
    status: str = R.INITIATED


@dataclass
class Expected:
    """What the model predicts a call does: the error it raises (None: returns), and the
    payment's status afterwards."""

    error: type[Exception] | None
    status: str
    changes: dict = field(default_factory=dict)


class PaymentsAndRefunds(RuleBasedStateMachine):
    hosted_payments = Bundle("hosted_payments")
    s2s_payments = Bundle("s2s_payments")
    refunds = Bundle("refunds")

    def __init__(self):
        super().__init__()
        self.tm = make_merchant(s2s=True)
        self.merchant = self.tm.merchant
        self.payments: dict[int, ModelPayment] = {}
        self.refund_model: dict[int, ModelRefund] = {}
        self.refund_ids: dict[str, tuple[int, tuple]] = {}  # merchant refundId -> (refund pk, request)
        self.txn_ids = itertools.count(1)

    # --- calling a service and comparing with the model --------------------------------------

    def _fresh(self, model: ModelPayment) -> Payment:
        return Payment.objects.select_related("merchant").get(pk=model.pk)

    def _call(self, fn, error: type[Exception] | None):
        """Run `fn`; it must raise exactly `error` (a GatewayError class), or nothing."""
        try:
            result = fn()
        except GatewayError as exc:
            assert error is not None and isinstance(exc, error), (
                f"raised {type(exc).__name__} ({exc.message}); the model expected "
                f"{error.__name__ if error else 'success'}")
            return None
        assert error is None, f"returned; the model expected {error.__name__}"
        return result

    def _apply(self, model: ModelPayment, expected: Expected, fn):
        result = self._call(fn, expected.error)
        model.status = expected.status
        for name, value in expected.changes.items():
            setattr(model, name, value)
        actual = self._fresh(model)
        assert (actual.status, actual.payment_mode) == (model.status, model.mode), (
            f"{model.flow} payment is {actual.status} by {actual.payment_mode or 'no method'}; "
            f"the model expected {model.status} by {model.mode or 'no method'}")
        return result

    @staticmethod
    def _attempt_fails(model: ModelPayment) -> Expected:
        """A declined attempt (CONTRACT.md, issue 19): a hosted payment is PENDING again with no
        method, or FAILED at its third failed attempt; an S2S payment is FAILED."""
        if model.flow == Payment.Flow.S2S:
            return Expected(None, S.FAILED)
        failed = model.failed_attempts + 1
        if failed >= Payment.MAX_FAILED_ATTEMPTS:
            return Expected(None, S.FAILED, {"failed_attempts": failed})
        return Expected(None, S.PENDING, {"failed_attempts": failed, "mode": "", "vpa": ""})

    def _expired_on_touch(self, model: ModelPayment, error: type[Exception]) -> Expected | None:
        """A service that looks at an open payment past its deadline expires it first."""
        if model.open and model.overdue:
            return Expected(error, S.EXPIRED)
        return None

    # --- creation ------------------------------------------------------------------------------

    @rule(target=hosted_payments, amount=payment_amounts)
    def create_hosted(self, amount):
        session = hosted.hosted_payment_create(
            merchant=self.merchant, merchant_txn_id=f"H-{next(self.txn_ids)}", amount=amount, currency="INR",
            return_url="http://merchant.test/return")
        payment = session.payment
        assert payment.status == S.PENDING
        self.payments[payment.pk] = ModelPayment(payment.pk, payment.sabpaisa_txn_id, Payment.Flow.HOSTED,
                                                 amount, S.PENDING)
        return payment.pk

    @rule(target=s2s_payments, amount=s2s_amounts, mode=st.sampled_from(["UPI_QR", "UPI_INTENT"]))
    def create_s2s(self, amount, mode):
        data = {"merchantTxnId": f"S-{next(self.txn_ids)}", "amount": amount, "currency": "INR", "paymentMode": mode,
                "customerName": "Asha Rao", "customerEmail": "asha@example.com", "customerPhone": "9876543210",
                "upiExpiryMinutes": 30}
        before = Payment.objects.filter(merchant=self.merchant).count()
        payment = self._call(lambda: s2s_payment_create(merchant=self.merchant, data=data),
                             S2S_START_FAILURES.get(amount))
        if payment is None:
            assert Payment.objects.filter(merchant=self.merchant).count() == before, "a refused start wrote a payment"
            return multiple()
        assert payment.status == S.PROCESSING
        self.payments[payment.pk] = ModelPayment(payment.pk, payment.sabpaisa_txn_id, Payment.Flow.S2S, amount,
                                                 S.PROCESSING, mode=M.UPI)
        return payment.pk

    @initialize(target=hosted_payments, amount=payment_amounts, number=st.sampled_from(CHALLENGE_CARDS))
    def start_with_a_card_payment(self, amount, number):
        """Every run starts with a paid payment of each flow, so refunds have work from step one."""
        return self.create_paid_by_card(amount=amount, number=number)

    @initialize(target=s2s_payments, amount=payment_amounts.filter(lambda a: a not in S2S_START_FAILURES))
    def start_with_a_upi_payment(self, amount):
        return self.create_paid_by_upi(amount=amount)

    @rule(target=hosted_payments, amount=payment_amounts, number=st.sampled_from(CHALLENGE_CARDS))
    def create_paid_by_card(self, amount, number):
        """A session the customer pays at once (so that refunds have payments to work on)."""
        pk = self.create_hosted(amount=amount)
        self.card_pay(pk=pk, number=number)
        self.card_otp(pk=pk, otp=RIGHT_OTP)
        return pk

    @rule(target=s2s_payments, amount=payment_amounts.filter(lambda a: a not in S2S_START_FAILURES))
    def create_paid_by_upi(self, amount):
        """An S2S payment approved at once."""
        pk = self.create_s2s(amount=amount, mode="UPI_QR")
        self.upi_pay(pk=pk, vpa=SUCCESS_VPA)
        self._approve(self.payments[pk])
        return pk

    # --- hosted checkout: cards ------------------------------------------------------------------

    @rule(pk=hosted_payments, number=st.sampled_from([*CHALLENGE_CARDS, DECLINED_CARD]))
    def card_pay(self, pk, number):
        model = self.payments[pk]
        expected = self._expired_on_touch(model, InvalidTransition)
        if expected is None:
            if model.status != S.PENDING:
                expected = Expected(InvalidTransition, model.status)
            elif number == DECLINED_CARD:
                expected = self._attempt_fails(ModelPayment(**{**model.__dict__, "mode": M.CARD}))
                expected.changes.setdefault("mode", M.CARD)
            else:
                expected = Expected(None, S.PROCESSING, {"mode": M.CARD})
        card = CardInput(number=number, expiry_month=12, expiry_year=date.today().year + 3, cvv="123")
        self._apply(model, expected, lambda: hosted.hosted_card_pay(payment=self._fresh(model), card=card))

    @rule(pk=hosted_payments, otp=st.sampled_from([RIGHT_OTP, WRONG_OTP]))
    def card_otp(self, pk, otp):
        model = self.payments[pk]
        expected = self._expired_on_touch(model, InvalidTransition)
        if expected is None:
            if model.status != S.PROCESSING or model.mode != M.CARD:
                expected = Expected(InvalidTransition, model.status)
            else:
                expected = Expected(None, S.SUCCESS) if otp == RIGHT_OTP else self._attempt_fails(model)
        self._apply(model, expected, lambda: hosted.hosted_card_verify_otp(payment=self._fresh(model), otp=otp))

    # --- UPI, both flows -------------------------------------------------------------------------

    @rule(pk=st.one_of(hosted_payments, s2s_payments), vpa=st.sampled_from([SUCCESS_VPA, FAILURE_VPA, TIMEOUT_VPA]))
    def upi_pay(self, pk, vpa):
        model = self.payments[pk]
        if not model.open:
            expected = Expected(ValidationError, model.status)
        elif model.overdue:
            expected = Expected(ValidationError, S.EXPIRED)
        elif model.status == S.PROCESSING and (model.mode != M.UPI or model.vpa):
            expected = Expected(ValidationError, model.status)  # another method, or another UPI app, pays it
        else:
            expected = Expected(None, S.PROCESSING, {"mode": M.UPI, "vpa": vpa})
            if vpa == FAILURE_VPA:
                expected = self._attempt_fails(model)
                expected.changes = {"mode": M.UPI, "vpa": vpa, **expected.changes}
        self._apply(model, expected, lambda: upi_pay(payment_id=model.pk, payer_vpa=vpa))

    def _awaiting_approval(self) -> list[ModelPayment]:
        return [p for p in self.payments.values() if p.status == S.PROCESSING and p.vpa == SUCCESS_VPA]

    @precondition(lambda self: any(p.vpa == SUCCESS_VPA for p in self.payments.values()))
    @rule(data=st.data())
    def upi_approval_task(self, data):
        """The delayed task success@sandbox queued: approves, even past the deadline (the payer
        was told it succeeded), and does nothing to a payment already final."""
        candidates = sorted(pk for pk, p in self.payments.items() if p.vpa == SUCCESS_VPA)
        self._approve(self.payments[data.draw(st.sampled_from(candidates), label="payment")])

    def _approve(self, model: ModelPayment) -> None:
        expected = Expected(None, S.SUCCESS if model.status == S.PROCESSING else model.status)
        self._apply(model, expected, lambda: upi_sandbox_approve(payment_id=model.pk))

    @rule()
    def upi_approvals_sweep(self):
        """The sweep finishing approvals whose task was lost: as if the delay had passed."""
        later = timezone.now() + timedelta(seconds=float(django_settings.SANDBOX_UPI_SUCCESS_DELAY_SECONDS) + 5)
        waiting = self._awaiting_approval()
        upi_sandbox_approvals_due(now=later)
        for model in waiting:
            model.status = S.SUCCESS

    # --- net banking, wallets, transfers, cancelling -------------------------------------------

    @rule(pk=hosted_payments, mode=st.sampled_from([M.NB, M.WALLET]))
    def bank_start(self, pk, mode):
        model = self.payments[pk]
        expected = self._expired_on_touch(model, InvalidTransition)
        if expected is None:
            expected = (Expected(None, S.PROCESSING, {"mode": mode}) if model.status == S.PENDING
                        else Expected(InvalidTransition, model.status))
        bank = "SBIN" if mode == M.NB else "PAYTM"
        self._apply(model, expected,
                    lambda: hosted.hosted_bank_start(payment=self._fresh(model), mode=mode, bank_code=bank))

    @rule(pk=hosted_payments, approved=st.booleans())
    def bank_answers(self, pk, approved):
        model = self.payments[pk]
        expected = self._expired_on_touch(model, InvalidTransition)
        if expected is None:
            if model.status == S.PROCESSING and model.mode in (M.NB, M.WALLET):
                expected = Expected(None, S.SUCCESS) if approved else self._attempt_fails(model)
            else:
                expected = Expected(InvalidTransition, model.status)
        self._apply(model, expected,
                    lambda: hosted.hosted_bank_complete(payment=self._fresh(model), approved=approved))

    @rule(pk=hosted_payments, mode=st.sampled_from([M.NEFT, M.RTGS, M.CHALLAN]))
    def transfer_start(self, pk, mode):
        model = self.payments[pk]
        expected = self._expired_on_touch(model, InvalidTransition)
        if expected is None:
            # The deadline moves TRANSFER_VALIDITY ahead: no longer overdue. A method the amount
            # does not fit (RTGS below Rs 2 lakh: gateway.platform.methods) is refused and changes nothing.
            if model.status != S.PENDING:
                expected = Expected(InvalidTransition, model.status)
            elif mode not in methods_for_amount({}, model.amount, carried=acquirer_methods()):
                expected = Expected(ValidationError, S.PENDING)
            else:
                expected = Expected(None, S.PROCESSING, {"mode": mode, "overdue": False})
        payment = self._apply(model, expected, lambda: hosted.hosted_transfer_start(payment=self._fresh(model),
                                                                                    mode=mode))
        if payment is not None:
            model.transfer_reference = payment.transfer_reference

    @precondition(lambda self: any(p.transfer_reference for p in self.payments.values()))
    @rule(data=st.data())
    def transfer_received(self, data):
        candidates = sorted(pk for pk, p in self.payments.items() if p.transfer_reference)
        model = self.payments[data.draw(st.sampled_from(candidates), label="payment")]
        expected = self._expired_on_touch(model, InvalidTransition)
        if expected is None:
            expected = (Expected(None, S.SUCCESS) if model.status == S.PROCESSING
                        else Expected(InvalidTransition, model.status))
        self._apply(model, expected, lambda: hosted.hosted_transfer_received(reference=model.transfer_reference))

    @rule(pk=hosted_payments)
    def customer_cancels(self, pk):
        model = self.payments[pk]
        # Cancelling a session whose time is up finds it EXPIRED, like every other action.
        expected = self._expired_on_touch(model, InvalidTransition)
        if expected is None:
            expected = (Expected(None, S.FAILED) if model.status == S.PENDING
                        else Expected(InvalidTransition, model.status))
        self._apply(model, expected, lambda: hosted.hosted_cancel(payment=self._fresh(model)))

    # --- the clock -------------------------------------------------------------------------------

    @rule(pk=st.one_of(hosted_payments, s2s_payments))
    def deadline_passes(self, pk):
        Payment.objects.filter(pk=pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        self.payments[pk].overdue = True

    @rule(pk=st.one_of(hosted_payments, s2s_payments))
    def expiry_task(self, pk):
        model = self.payments[pk]
        expected = Expected(None, S.EXPIRED if model.open and model.overdue else model.status)
        self._apply(model, expected, lambda: payment_expire(payment_id=pk))

    @rule()
    def expiry_sweep(self):
        payments_expire_due()
        for model in self.payments.values():
            if model.open and model.overdue:
                model.status = S.EXPIRED

    # --- refunds ---------------------------------------------------------------------------------

    def _committed(self, payment_pk: int) -> int:
        return sum(r.amount for r in self.refund_model.values() if r.payment_pk == payment_pk and r.status != R.FAILED)

    @rule(target=refunds, pk=st.one_of(hosted_payments, s2s_payments), ask=refund_asks,
          refund_id=merchant_refund_ids)
    def refund_any_payment(self, pk, ask, refund_id):
        return self._refund(self.payments[pk], ask, refund_id)

    @precondition(lambda self: any(p.status == S.SUCCESS for p in self.payments.values()))
    @rule(target=refunds, data=st.data(), ask=refund_asks, refund_id=merchant_refund_ids)
    def refund_a_paid_payment(self, data, ask, refund_id):
        paid = sorted(pk for pk, p in self.payments.items() if p.status == S.SUCCESS)
        return self._refund(self.payments[data.draw(st.sampled_from(paid), label="payment")], ask, refund_id)

    def _refund(self, model: ModelPayment, ask, refund_id):
        pk = model.pk
        remaining = model.amount - self._committed(pk) if model.status == S.SUCCESS else 0
        amount = {"remaining": remaining, "remaining + 1": remaining + 1, "half": remaining // 2,
                  "below the minimum": min(REFUND_MIN_AMOUNT, remaining) - 1, "zero": 0}.get(ask, ask)
        request = (model.txn_id, amount)
        created_amount = None
        if refund_id in self.refund_ids:
            same = self.refund_ids[refund_id][1] == request
            error = None if same else DuplicateRefund
        elif model.status != S.SUCCESS:
            error = RefundNotAllowed
        elif amount is not None and amount <= 0:
            error = ValidationError
        elif remaining <= 0 or (amount is not None and amount > remaining):
            error = RefundAmountExceeded
        elif amount is not None and amount < min(REFUND_MIN_AMOUNT, remaining):
            error = ValidationError
        else:
            error, created_amount = None, remaining if amount is None else amount
        result = self._call(lambda: refund_create(merchant=self.merchant, payment=self._fresh(model), amount=amount,
                                                  refund_id=refund_id), error)
        if result is None:
            return multiple()
        if created_amount is None:  # a repeat: the first refund again
            assert not result.created and result.refund.pk == self.refund_ids[refund_id][0]
            return multiple()
        assert result.created and result.refund.amount == created_amount and result.refund.status == R.INITIATED
        self.refund_model[result.refund.pk] = ModelRefund(result.refund.pk, pk, created_amount)
        if refund_id is not None:
            self.refund_ids[refund_id] = (result.refund.pk, request)
        return result.refund.pk

    @rule(refund_pk=refunds)
    def bank_answers_refund(self, refund_pk):
        model = self.refund_model[refund_pk]
        result = refund_submit(refund_pk=refund_pk)
        if model.status != R.INITIATED:
            assert result is None, "a final refund was submitted again"
            return
        model.status = R.FAILED if model.amount == REFUND_FAILING_AMOUNT else R.SUCCESS
        assert result is not None and result.status == model.status, (
            f"refund is {result and result.status}; the model expected {model.status}")

    # --- what must always hold -------------------------------------------------------------------

    @invariant()
    def payment_histories_are_legal(self):
        events = defaultdict(list)
        for payment_id, from_status, to_status in (
                PaymentEvent.objects.filter(payment__merchant=self.merchant, kind=PaymentEvent.Kind.STATUS)
                .order_by("payment_id", "id").values_list("payment_id", "from_status", "to_status")):
            events[payment_id].append((from_status, to_status))
        webhooks = defaultdict(list)
        for subject, event_type in (WebhookEvent.objects.filter(merchant=self.merchant,
                                                                 event_type__startswith="payment.")
                                    .values_list("subject_id", "event_type")):
            webhooks[subject].append(event_type)
        for pk, txn_id, flow, status in Payment.objects.filter(merchant=self.merchant).values_list(
                "pk", "sabpaisa_txn_id", "flow", "status"):
            history = events[pk]
            first = S.PENDING if flow == Payment.Flow.HOSTED else S.PROCESSING
            assert history and history[0] == ("", first), f"{txn_id} was not created {first}: {history}"
            for (_, previous), (from_status, to_status) in zip(history, history[1:]):
                assert from_status == previous, f"{txn_id}'s history skips a step: {history}"
                assert to_status in PAYMENT_TRANSITIONS[from_status], (
                    f"{txn_id}: {from_status} -> {to_status} is not in TRANSITIONS")
            assert history[-1][1] == status, f"{txn_id} is {status} but its history ends {history[-1]}"
            finals = [to for _, to in history if to in FINAL]
            assert len(finals) <= 1, f"{txn_id} became final twice: {history}"
            expected_webhooks = [f"payment.{status.lower()}"] if status in FINAL else []
            assert webhooks[txn_id] == expected_webhooks, (
                f"{txn_id} is {status} with webhook events {webhooks[txn_id]}")
            if pk in self.payments:
                assert status == self.payments[pk].status, f"{txn_id} is {status}; model: {self.payments[pk].status}"

    @invariant()
    def refunds_never_exceed_the_payment(self):
        refunds = list(Refund.objects.filter(merchant=self.merchant).select_related("payment"))
        committed = defaultdict(int)
        for refund in refunds:
            payment = refund.payment
            assert payment.status == S.SUCCESS, f"refund {refund.refund_id} of a {payment.status} payment"
            if refund.status != R.FAILED:
                committed[payment.pk] += refund.amount
                paid = payment.paid_amount or payment.amount
                assert committed[payment.pk] <= paid, (
                    f"{payment.sabpaisa_txn_id}: refunds of {committed[payment.pk]} paise, paid {paid}")
            assert refund.status == self.refund_model[refund.pk].status
        events = defaultdict(list)
        for refund_id, from_status, to_status in (
                RefundEvent.objects.filter(refund__merchant=self.merchant, kind=RefundEvent.Kind.STATUS)
                .order_by("refund_id", "id").values_list("refund_id", "from_status", "to_status")):
            events[refund_id].append((from_status, to_status))
        webhooks = defaultdict(list)
        for subject, event_type in (WebhookEvent.objects.filter(merchant=self.merchant,
                                                                 event_type__startswith="refund.")
                                    .values_list("subject_id", "event_type")):
            webhooks[subject].append(event_type)
        for refund in refunds:
            history = events[refund.pk]
            assert history and history[0] == ("", R.INITIATED), f"{refund.refund_id}: {history}"
            for (_, previous), (from_status, to_status) in zip(history, history[1:]):
                assert from_status == previous and to_status in REFUND_TRANSITIONS[from_status], (
                    f"{refund.refund_id}: {from_status} -> {to_status} is not in TRANSITIONS")
            assert history[-1][1] == refund.status
            final = refund.status in Refund.FINAL_STATUSES
            assert webhooks[refund.refund_id] == ([REFUND_EVENT_TYPES[refund.status]] if final else []), (
                f"refund {refund.refund_id} is {refund.status} with webhook events {webhooks[refund.refund_id]}")

    @invariant()
    def refund_totals_are_the_sums_of_the_refunds(self):
        # The payment's columns, moved by refunds' creation and transitions, never drift from
        # the refunds themselves (refunds.selectors.payments_with_refund_totals_off).
        assert payments_with_refund_totals_off() == []


@pytest.mark.django_db(transaction=True)
def test_payments_and_refunds_follow_their_state_machines():
    run_state_machine_as_test(PaymentsAndRefunds, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=STEPS, derandomize=DERANDOMIZE, deadline=None,
        database=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))
