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
query (call_status) can tell the gateway an answer that never reached it. A UPI pay request
it answers PENDING goes on to its payer's bank (payer.py), which answers later on its own, as a
real acquirer's payer's bank does: no hook, nothing asked of the gateway's services.
"""
from __future__ import annotations

import hashlib
import secrets

from gateway.core.ids import random_string
from gateway.platform.methods import CODES
from payments.acquirer.base import (
    AcquirerAnswer,
    AcquirerError,
    AcquirerRefused,
    AcquirerUnavailable,
    CardFields,
    DisputeFound,
    DisputeNotice,
    EvidenceFile,
    NoticeDelivery,
    Outcome,
    PaymentNotice,
    RefundNotice,
    SettlementPage,
    TransferAccount,
)
from payments.cards import CardInput
from payments.models import Payment, SandboxAcquirerCall

from . import disputes, notices, payer, settlements

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


class SandboxAcquirer:
    name = "sandbox"

    def upi_vpa_check(self, vpa: str) -> str:
        test_vpa = sandbox_test_vpa(vpa)
        if test_vpa is None:
            known = ", ".join((*UPI_TEST_VPAS, *UPI_TEST_VPA_ALIASES))
            raise ValueError(f"{vpa} is not a sandbox test VPA (use one of {known})")
        return test_vpa

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
        # left it (success@sandbox awaiting approval, failure@sandbox declined), and its payer's
        # bank is told of it again (an approval sent twice approves once); any other VPA was
        # never a request it took.
        if payer_vpa.strip().lower() not in UPI_TEST_VPAS:
            raise AcquirerRefused(f"no UPI pay request from that payer for {payment.sabpaisa_txn_id}")
        return self.upi_pay(payment=payment, payer_vpa=payer_vpa)

    def upi_pay(self, *, payment: Payment, payer_vpa: str, return_url: str = "") -> AcquirerAnswer:
        vpa = payer_vpa.strip().lower()
        if vpa == UPI_FAILURE_VPA:
            return AcquirerAnswer(Outcome.DECLINED, message="declined by the payer's bank (sandbox)",
                                  raw={"vpa": vpa, "result": "declined"})
        if vpa == UPI_SUCCESS_VPA:
            # Its payer's bank approves it later, on its own (payer.py): the gateway hears of it
            # as of any acquirer's answer that comes later.
            payer.approval_send(payment=payment, vpa=vpa)
        elif vpa == UPI_TIMEOUT_VPA:
            payer.timeout_set(payment=payment)
        else:
            raise ValueError(f"{payer_vpa} is not a sandbox test VPA")
        return AcquirerAnswer(Outcome.PENDING, raw={"vpa": vpa, "result": "awaiting approval"})

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

    def card_fields(self) -> CardFields | None:
        # The sandbox's card network is the checkout's own form (CONTRACT.md's card inputs): it
        # moves no money, so no number it takes is a real one.
        return None

    def card_fields_open(self, *, payment: Payment, return_url: str = "") -> AcquirerAnswer:
        raise AcquirerRefused("the sandbox has no card fields of its own: the checkout's card form pays it")

    def card_fields_said(self, *, payment: Payment, said: dict[str, str]) -> str:
        return ""  # no fields of its own: nothing they could say

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

    # -- its disputes (disputes.py: the test amounts and staff's test disputes) -----------------

    def disputes_of(self, *, payment: Payment) -> list[DisputeFound]:
        return disputes.disputes_of(payment)

    def dispute_get(self, *, processor_id: str) -> DisputeFound:
        return disputes.dispute_get(processor_id)

    def dispute_accept(self, *, processor_id: str) -> DisputeFound:
        return disputes.dispute_accept(processor_id)

    def dispute_evidence_submit(self, *, processor_id: str, evidence: EvidenceFile) -> DisputeFound:
        return disputes.dispute_evidence_submit(processor_id, evidence)

    # -- its payouts (settlements.py): T+1, fees and GST, from its own records ----------------

    def settlements_list(self, *, start, end, cursor: str = "") -> SettlementPage:
        return settlements.settlements_page(start=start, end=end, cursor=cursor)

    def settlement_events(self, *, settlement_id: str, cursor: str = "") -> SettlementPage:
        return settlements.events_page(settlement_id=settlement_id, cursor=cursor)

    # -- its notices (notices.py), delivered to the inbound door like a real acquirer's -------

    def notice_verify(self, *, headers, raw_body: bytes) -> NoticeDelivery:
        return notices.notice_verify(headers=headers, raw_body=raw_body)

    def notice_parse(self, payload: dict) -> PaymentNotice | RefundNotice | DisputeNotice | None:
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
    # Its payer's bank finishes what it answered PENDING (payer.py): no need to ask.
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
