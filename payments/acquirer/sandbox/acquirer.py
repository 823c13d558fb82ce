"""The sandbox acquirer: behaves exactly as CONTRACT.md's test inputs say, and moves no money.

Test inputs (documented in docs/sandbox.md):
- UPI VPA success@sandbox: accepted; SUCCESS after SANDBOX_UPI_SUCCESS_DELAY_SECONDS.
- UPI VPA failure@sandbox: declined at once.
- UPI VPA timeout@sandbox: never approved; EXPIRED after SANDBOX_UPI_TIMEOUT_SECONDS or the
  payment's own expiry, whichever comes first.
- success@upi, failure@upi, timeout@upi (the live SabPaisa staging's test VPAs) are aliases of
  the three above: a payer giving one is recorded as the @sandbox VPA it stands for.
- Cards 4111 1111 1111 1111 (Visa), 5555 5555 5555 4444 (Mastercard): 3-D Secure challenge,
  OTP 123456 approves, any other OTP declines. 4000 0000 0000 0002: declined by the issuer.
  Any other card number: declined ("not a sandbox test card").
- S2S start failures, by amount: 100001 paise -> PAYMENT_FAILED, 100002 -> SERVICE_UNAVAILABLE,
  100003 -> PROCESSING_ERROR.
- Refunds: a refund of exactly 100013 paise (₹1,000.13) is rejected by the bank (FAILED).
- Reversals of late approvals: a payment of exactly 100014 paise (₹1,000.14) cannot be
  reversed (the reversal is refused, for a person to settle); any other is reversed.

Like a real acquirer it remembers what it answered to the calls that move money (an OTP, a
bank's decision, a transfer credited: payments.models.SandboxAcquirerCall), so its status
query (call_status) can tell the gateway an answer that never reached it.
"""
from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable

from django.core.exceptions import ImproperlyConfigured

from gateway.core.ids import random_string
from gateway.platform.methods import CODES
from payments.acquirer.base import (
    AcquirerAnswer,
    AcquirerError,
    AcquirerRefused,
    AcquirerUnavailable,
    NoticeDelivery,
    Outcome,
    PaymentNotice,
    RefundNotice,
    SettlementPage,
    TransferAccount,
)
from payments.cards import CardInput
from payments.models import Payment, SandboxAcquirerCall

from . import notices, settlements

UPI_SUCCESS_VPA = "success@sandbox"
UPI_FAILURE_VPA = "failure@sandbox"
UPI_TIMEOUT_VPA = "timeout@sandbox"
UPI_TEST_VPAS = (UPI_SUCCESS_VPA, UPI_FAILURE_VPA, UPI_TIMEOUT_VPA)
# The live SabPaisa staging's test VPAs, so a merchant's test suite written against it works
# unchanged (issue 17). Resolved once, where the payer's VPA is read, so everything after (the
# approval task, the sweeps, the console) sees only the three above.
UPI_TEST_VPA_ALIASES = {"success@upi": UPI_SUCCESS_VPA, "failure@upi": UPI_FAILURE_VPA,
                        "timeout@upi": UPI_TIMEOUT_VPA}


def sandbox_test_vpa(vpa: str) -> str | None:
    """The sandbox test VPA `vpa` (lower-cased) is or stands for; None when it is neither."""
    vpa = UPI_TEST_VPA_ALIASES.get(vpa, vpa)
    return vpa if vpa in UPI_TEST_VPAS else None

CHALLENGE_CARDS = {"4111111111111111": "Sandbox Bank of India", "5555555555554444": "Sandbox Co-operative Bank"}
DECLINED_CARD = "4000000000000002"
TEST_OTP = "123456"

S2S_START_FAILURES = {100001: AcquirerRefused, 100002: AcquirerUnavailable, 100003: AcquirerError}
# The amount of a payment whose late approval the sandbox refuses to reverse.
REVERSAL_REFUSED_AMOUNT = 100014

# Net banking banks and wallets the sandbox offers (code -> display name).
BANKS = {
    "SBIN": "State Bank of India", "HDFC": "HDFC Bank", "ICIC": "ICICI Bank", "UTIB": "Axis Bank",
    "KKBK": "Kotak Mahindra Bank", "PUNB": "Punjab National Bank",
}
WALLETS = {"PAYTM": "Paytm", "PHONEPE": "PhonePe", "AMAZONPAY": "Amazon Pay", "MOBIKWIK": "MobiKwik"}


def new_rrn() -> str:
    """A 12-digit retrieval reference number, as Indian banks issue them."""
    return random_string("0123456789", 12)


def _remembered(payment: Payment, step: str, answer: AcquirerAnswer) -> AcquirerAnswer:
    """Keep the answer to a money-moving call, for call_status, and return it."""
    SandboxAcquirerCall.objects.create(payment=payment, step=step, outcome=answer.outcome.value,
                                       reference=answer.reference, message=answer.message[:200],
                                       attempt=payment.attempt)
    return answer


def new_challenge_ref() -> str:
    """A 3-D Secure challenge id (the ACS transaction id of 3-D Secure 2)."""
    return "3DS-" + secrets.token_hex(12)


def upi_request_cancelled(*, payment_id: int, attempt: int) -> bool:
    """Whether the gateway cancelled the UPI pay request of the payment's attempt `attempt`
    (SandboxAcquirer.upi_cancel): the sandbox payer's bank then never approves it."""
    return SandboxAcquirerCall.objects.filter(payment_id=payment_id, step="upi_cancel", attempt=attempt).exists()


# --- The sandbox's payer's bank: a hook that payments.sandbox_upi fills in ----------------
#
# A pay request the sandbox answered PENDING is approved (or left to time out) by the sandbox's
# payer's bank, payments.sandbox_upi. It records its approval through the payment services, as a
# real bank's answer arrives over HTTP, so it stands above them, and this adapter, below them,
# must not import it, not even inside a function (that was an import circle through the
# approval task). Instead the adapter declares here the two things it asks of its payer's bank,
# and payments.apps installs payments.sandbox_upi's when Django starts: the arrow runs one way,
# payments.sandbox_upi -> payments.acquirer.sandbox.acquirer. Its absence is a clear
# ImproperlyConfigured, never a request silently left unapproved.
RequestPending = Callable[..., None]  # (*, payment: Payment, vpa: str): act on a pending request
ApprovalsDue = Callable[..., int]  # (*, now: datetime | None): finish lost approvals; how many
_payer_bank: tuple[RequestPending, ApprovalsDue] | None = None


def payer_bank_provide(*, request_pending: RequestPending, approvals_due: ApprovalsDue) -> None:
    """Install the sandbox's payer's bank: `request_pending(payment=, vpa=)` acts on a pay
    request the sandbox left PENDING; `approvals_due(now=)` finishes the approvals whose task
    was lost and answers how many. Called by payments when its app is ready."""
    global _payer_bank
    _payer_bank = (request_pending, approvals_due)


def _payer() -> tuple[RequestPending, ApprovalsDue]:
    if _payer_bank is None:
        raise ImproperlyConfigured("the sandbox's payer's bank (payments.sandbox_upi) is installed when "
                                   "payments is ready (payments.apps), which it is not")
    return _payer_bank


class SandboxAcquirer:
    name = "sandbox"

    def upi_vpa_check(self, vpa: str) -> str:
        test_vpa = sandbox_test_vpa(vpa)
        if test_vpa is None:
            known = ", ".join((*UPI_TEST_VPAS, *UPI_TEST_VPA_ALIASES))
            raise ValueError(f"{vpa} is not a sandbox test VPA (use one of {known})")
        return test_vpa

    # The sandbox's payer's bank answers what is left pending (payer_bank_provide says why it
    # is reached through a hook).

    def upi_pending(self, *, payment: Payment, payer_vpa: str) -> None:
        request_pending, _ = _payer()
        request_pending(payment=payment, vpa=payer_vpa)

    def upi_pending_sweep(self, *, now=None) -> int:
        _, approvals_due = _payer()
        return approvals_due(now=now)

    def upi_register(self, *, payment: Payment) -> AcquirerAnswer:
        failure = S2S_START_FAILURES.get(payment.amount)
        if failure is not None:
            raise failure(f"sandbox test amount {payment.amount} refuses to start")
        return AcquirerAnswer(Outcome.PENDING, raw={"registered": payment.sabpaisa_txn_id})

    def upi_intent(self, *, payment: Payment, return_url: str = "") -> AcquirerAnswer:
        # The gateway's own link is the sandbox's (its UPI app at /sandbox/upi pays it): no link here.
        return AcquirerAnswer(Outcome.PENDING, raw={"intent": payment.sabpaisa_txn_id})

    def upi_collect(self, *, payment: Payment, vpa: str, return_url: str = "") -> AcquirerAnswer:
        return self.upi_pay(payment=payment, payer_vpa=vpa)

    def upi_status(self, *, payment: Payment, payer_vpa: str) -> AcquirerAnswer:
        # The sandbox keeps no record of requests: one from a test VPA stands where upi_pay
        # left it (success@sandbox awaiting approval, failure@sandbox declined); any other VPA
        # was never a request it took.
        if payer_vpa.strip().lower() not in UPI_TEST_VPAS:
            raise AcquirerRefused(f"no UPI pay request from that payer for {payment.sabpaisa_txn_id}")
        return self.upi_pay(payment=payment, payer_vpa=payer_vpa)

    def upi_pay(self, *, payment: Payment, payer_vpa: str, return_url: str = "") -> AcquirerAnswer:
        vpa = payer_vpa.strip().lower()
        if vpa == UPI_FAILURE_VPA:
            return AcquirerAnswer(Outcome.DECLINED, message="declined by the payer's bank (sandbox)",
                                  raw={"vpa": vpa, "result": "declined"})
        if vpa in (UPI_SUCCESS_VPA, UPI_TIMEOUT_VPA):
            return AcquirerAnswer(Outcome.PENDING, raw={"vpa": vpa, "result": "awaiting approval"})
        raise ValueError(f"{payer_vpa} is not a sandbox test VPA")

    def upi_cancel(self, *, payment: Payment, payer_vpa: str) -> AcquirerAnswer:
        # A pay request waits for the payer's approval until the approval task runs; once
        # cancelled here, upi_request_cancelled stops that approval.
        return _remembered(payment, "upi_cancel",
                           AcquirerAnswer(Outcome.DECLINED, message="cancelled before the payer approved",
                                          raw={"result": "cancelled"}))

    def card_authorize(self, *, payment: Payment, card: CardInput, return_url: str = "") -> AcquirerAnswer:
        if card.number == DECLINED_CARD:
            return AcquirerAnswer(Outcome.DECLINED, message="declined by the issuer (sandbox)",
                                  issuer="Sandbox Decline Bank", raw={"result": "declined", "last4": card.last4})
        issuer = CHALLENGE_CARDS.get(card.number)
        if issuer is None:
            return AcquirerAnswer(Outcome.DECLINED, message="not a sandbox test card",
                                  raw={"result": "declined", "last4": card.last4})
        return AcquirerAnswer(Outcome.CHALLENGE, reference=new_challenge_ref(), issuer=issuer,
                              raw={"result": "3ds challenge", "last4": card.last4, "acs": "sandbox-acs"})

    def card_verify_otp(self, *, payment: Payment, otp: str, challenge_ref: str) -> AcquirerAnswer:
        # The sandbox keeps no record of its challenges; like an ACS it refuses an OTP that
        # answers none.
        if not challenge_ref:
            answer = AcquirerAnswer(Outcome.DECLINED, message="3-D Secure authentication failed (no challenge)",
                                    raw={"result": "no challenge"})
        elif secrets.compare_digest(otp.strip().encode(), TEST_OTP.encode()):
            answer = AcquirerAnswer(Outcome.APPROVED, reference=new_rrn(), raw={"result": "authenticated"})
        else:
            answer = AcquirerAnswer(Outcome.DECLINED, message="3-D Secure authentication failed (wrong OTP)",
                                    raw={"result": "authentication failed"})
        return _remembered(payment, "card_verify_otp", answer)

    def bank_authorize(self, *, payment: Payment, bank_code: str, approved: bool) -> AcquirerAnswer:
        if approved:
            answer = AcquirerAnswer(Outcome.APPROVED, reference=new_rrn(), raw={"bank": bank_code, "result": "approved"})
        else:
            answer = AcquirerAnswer(Outcome.DECLINED, message="declined on the bank's page (sandbox)",
                                    raw={"bank": bank_code, "result": "declined"})
        return _remembered(payment, "bank_authorize", answer)

    def transfer_received(self, *, payment: Payment, amount: int) -> AcquirerAnswer:
        return _remembered(payment, "transfer_received",
                           AcquirerAnswer(Outcome.APPROVED, reference=new_rrn(), raw={"credited": amount}))

    def call_status(self, *, payment: Payment, step: str) -> AcquirerAnswer:
        call = (SandboxAcquirerCall.objects.filter(payment=payment, step=step, attempt=payment.attempt).order_by("-id")
                .only("outcome", "reference", "message").first())
        if call is None:
            raise AcquirerRefused(f"no {step} call for {payment.sabpaisa_txn_id}")
        return AcquirerAnswer(Outcome(call.outcome), reference=call.reference, message=call.message,
                              raw={"result": "status query", "answered": call.outcome})

    def refund(self, *, payment: Payment, amount: int, refund_id: str) -> AcquirerAnswer:
        """Idempotent on `refund_id`, as a real acquirer's refund must be (docs/refunds.md): the
        same refund submitted again (the sweep, after a slow answer) gets the same outcome and
        the same reference, and no second refund. The reference is derived from the payment and
        the refund id; the refund is recorded once for the next payout to deduct."""
        from django.conf import settings

        if amount == getattr(settings, "SANDBOX_REFUND_FAILURE_AMOUNT", 100013):
            return AcquirerAnswer(Outcome.DECLINED, message="refund rejected by the bank (sandbox test amount)",
                                  raw={"result": "rejected"})
        digest = hashlib.sha256(f"{payment.sabpaisa_txn_id}|{refund_id}".encode()).digest()
        reference = "RF" + f"{int.from_bytes(digest[:8], 'big') % 10**12:012d}"
        settlements.refund_record(payment=payment, amount=amount, refund_ref=self.refund_ref(refund_id))
        return AcquirerAnswer(Outcome.APPROVED, reference=reference,
                              raw={"result": "refunded", "method": payment.payment_mode or payment.s2s_mode})

    def reverse(self, *, payment: Payment, bank_rrn: str, amount: int, reversal_id: str) -> AcquirerAnswer:
        """Idempotent on `reversal_id` and stateless, like `refund`: the reference is derived
        from the approval and the reversal id, so a reversal sent twice gets one answer."""
        if amount == REVERSAL_REFUSED_AMOUNT:
            return AcquirerAnswer(Outcome.DECLINED, message="reversal refused by the bank (sandbox test amount)",
                                  raw={"result": "reversal refused", "approval": bank_rrn})
        digest = hashlib.sha256(f"{bank_rrn}|{reversal_id}".encode()).digest()
        reference = "RV" + f"{int.from_bytes(digest[:8], 'big') % 10**12:012d}"
        return AcquirerAnswer(Outcome.APPROVED, reference=reference,
                              raw={"result": "reversed", "approval": bank_rrn})

    def refund_ref(self, refund_id: str) -> str:
        return refund_id

    # -- its payouts (settlements.py): T+1, fees and GST, from its own records ----------------

    def settlements_list(self, *, start, end, cursor: str = "") -> SettlementPage:
        return settlements.settlements_page(start=start, end=end, cursor=cursor)

    def settlement_events(self, *, settlement_id: str, cursor: str = "") -> SettlementPage:
        return settlements.events_page(settlement_id=settlement_id, cursor=cursor)

    # -- its notices (notices.py), delivered to the inbound door like a real acquirer's -------

    def notice_verify(self, *, headers, raw_body: bytes) -> NoticeDelivery:
        return notices.notice_verify(headers=headers, raw_body=raw_body)

    def notice_parse(self, payload: dict) -> PaymentNotice | RefundNotice | None:
        return notices.notice_parse(payload)

    def notice_confirm(self, *, payment: Payment, notice: PaymentNotice) -> AcquirerAnswer | None:
        # The sandbox's payments have one attempt at a time, and its declines are final.
        return notice.answer

    # Its amounts are the gateway's own: integer paise.
    def amount_to_acquirer(self, paise: int) -> int:
        if isinstance(paise, bool) or not isinstance(paise, int) or paise < 0:
            raise ValueError(f"not an amount in paise: {paise!r}")
        return paise

    def amount_from_acquirer(self, value) -> int:
        return self.amount_to_acquirer(value)

    # -- what the hosted checkout shows (payments.acquirer.base.Acquirer) ----------------------

    methods = frozenset(CODES)  # every method of the checkout: it simulates them all
    banks = BANKS
    wallets = WALLETS
    test_otp = TEST_OTP
    requires_customer_phone = False  # it invents nothing and needs nothing of the customer
    # Its payer's bank finishes what it answered PENDING (upi_pending_sweep): no need to ask.
    status_query_while_pending = False
    upi_test_vpas = UPI_TEST_VPAS
    gateway_upi_link_payable = True  # its payer's bank pays the gateway's own link (payments/sandbox_upi)
    # Where transfers are paid: the sandbox's collection account, the account number ending in
    # the payment's transfer reference (a virtual account per payment, so funds are matched
    # without the customer's help).
    TRANSFER_BENEFICIARY = {"name": "Gateway Collections Escrow", "bank": "Sandbox Escrow Bank",
                            "ifsc": "SBXG0000001", "branch": "Mumbai Fort", "account_prefix": "222333"}

    def bank_redirect(self, *, payment: Payment, mode: str, bank_code: str, return_url: str = "") -> AcquirerAnswer:
        # No page of a bank's: the checkout's own sandbox bank page stands in for it.
        return AcquirerAnswer(Outcome.PENDING, raw={"bank": bank_code, "result": "the sandbox bank page"})

    def transfer_details(self, *, payment: Payment, return_url: str = "") -> TransferAccount:
        beneficiary = self.TRANSFER_BENEFICIARY
        return TransferAccount(beneficiary=beneficiary["name"], bank=beneficiary["bank"], ifsc=beneficiary["ifsc"],
                               branch=beneficiary["branch"],
                               account=beneficiary["account_prefix"] + payment.transfer_reference[2:])
