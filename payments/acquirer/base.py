"""What the gateway needs from an acquirer (a bank or processor), and what it gets back.

Callers never hold a payment row lock while calling these methods: lock, move to PROCESSING,
commit; call the acquirer; then lock again and record the answer.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from typing import Protocol

from payments.cards import CardInput
from payments.models import Payment


# The longest any acquirer call may take: an implementation times its calls out within it. A
# call claimed longer ago than this will not be answered here any more (the process or the
# database went down mid-call), so the payments sweep asks the acquirer's status query about it
# (payments.services.acquirer_answers), and the expiry, which waits for a call in flight, waits
# no longer than this (payments.services.transitions).
CALL_TIME_LIMIT = timedelta(seconds=60)


class Outcome(str, Enum):
    APPROVED = "approved"      # money moved; `reference` is the bank reference (RRN)
    DECLINED = "declined"      # a final no; `message` says why
    PENDING = "pending"        # accepted; the final answer comes later (callback or task)
    CHALLENGE = "challenge"    # the customer must authenticate (3-D Secure); `reference` is the challenge id,
    #                            `link` the issuer's page when the acquirer has one (else the checkout asks the OTP)


@dataclass(frozen=True)
class AcquirerAnswer:
    outcome: Outcome
    reference: str = ""
    message: str = ""
    issuer: str = ""
    # Where the processor sends the payer, when it does: its own upi://pay link (upi_register,
    # for upiQrString / intentUrl), its 3-D Secure or bank page (a CHALLENGE). Empty: the
    # gateway's own (the sandbox's).
    link: str = ""
    # What the acquirer said, for the payment's story. Never carries card data.
    raw: dict = field(default_factory=dict)


@dataclass(frozen=True)
class TransferAccount:
    """Where a NEFT / RTGS transfer is paid (transfer_details): the beneficiary account."""

    beneficiary: str
    bank: str
    ifsc: str
    account: str
    branch: str = ""


@dataclass(frozen=True)
class NoticeDelivery:
    """A delivery the acquirer verified as its own (Acquirer.notice_verify): its content, the
    acquirer's own time of sending it and its event type, for the record."""

    payload: dict
    sent_at: datetime
    event_type: str = ""
    # False: genuinely signed but older than the acquirer's freshness window (its own retry of
    # a delivery we did not take, or a replay). Nothing it says is applied unless the
    # acquirer's status query confirms it (Acquirer.notice_confirm); a stale refund notice is
    # left to the refund's next submission, which reads the refund at the acquirer.
    fresh: bool = True


@dataclass(frozen=True)
class PaymentNotice:
    """An acquirer's word, by its own delivery (a webhook), about one attempt of a payment.

    `order_ref` names the payment as the gateway named it to the acquirer (its sabpaisaTxnId);
    `answer` is the same answer the acquirer's status query gives (APPROVED with the reference,
    DECLINED), built by the same function; None: not final yet. A DECLINED notice is applied
    only as Acquirer.notice_confirm confirms it (an acquirer may report the failure of an
    attempt the customer has since followed with another)."""

    order_ref: str
    amount: int | None  # paise, as the notice says; None when it carried none readable
    answer: AcquirerAnswer | None
    attempt_ref: str = ""  # the acquirer's id of the attempt it speaks of


@dataclass(frozen=True)
class RefundNotice:
    """An acquirer's word about one refund (or reversal) it was sent: `refund_ref` is the id the
    acquirer knows it by (Acquirer.refund_ref of ours); `answer` as its refund call answers
    (APPROVED with the bank's reference, DECLINED with why); None: not final yet."""

    order_ref: str
    refund_ref: str
    amount: int | None
    answer: AcquirerAnswer | None


# -- disputes (chargebacks): the processor's cases against a payment, as neutral values -----------

# Where a dispute stands, in the gateway's own words (refunds.disputes.state holds its table);
# an acquirer's package maps its processor's statuses onto these, in one place.
DISPUTE_OPEN = "open"                      # raised; the processor has not asked the merchant yet
DISPUTE_NEEDS_RESPONSE = "needs_response"  # the merchant must answer (evidence or accept) by respond_by
DISPUTE_UNDER_REVIEW = "under_review"      # answered (evidence in); the processor or network decides
DISPUTE_WON = "won"                        # decided for the merchant
DISPUTE_LOST = "lost"                      # decided for the customer: the amount is taken back
DISPUTE_ACCEPTED = "accepted"              # the merchant accepted it: the amount is taken back
DISPUTE_STATUSES = (DISPUTE_OPEN, DISPUTE_NEEDS_RESPONSE, DISPUTE_UNDER_REVIEW, DISPUTE_WON, DISPUTE_LOST,
                    DISPUTE_ACCEPTED)
# What kind of case it is (the card networks' and NPCI's stages).
DISPUTE_KINDS = ("dispute", "chargeback", "retrieval", "pre_arbitration", "arbitration")


@dataclass(frozen=True)
class DisputeEvidenceType:
    """A kind of document the processor prefers for a dispute (its `preferred_evidence`)."""

    code: str          # what is sent back with the file (Cashfree's document_type)
    description: str = ""


@dataclass(frozen=True)
class DisputeFound:
    """One dispute as the processor states it, in neutral values: what its dispute calls answer
    and what its dispute notices carry, built by one function in the acquirer's package.

    `order_ref` names the payment as the gateway named it to the acquirer (its sabpaisaTxnId).
    Times are aware (UTC or with their own offset); `respond_by` None: the processor set none."""

    processor_id: str
    order_ref: str
    status: str               # one of DISPUTE_STATUSES
    processor_status: str     # the processor's own word, for people and the story
    kind: str                 # one of DISPUTE_KINDS
    amount: int | None        # paise
    reason_code: str = ""
    reason_text: str = ""
    respond_by: datetime | None = None
    opened_at: datetime | None = None
    updated_at: datetime | None = None
    resolved_at: datetime | None = None
    remarks: str = ""
    preferred_evidence: tuple[DisputeEvidenceType, ...] = ()
    evidence: tuple[str, ...] = ()   # names of the documents the processor holds
    raw: dict = field(default_factory=dict)


@dataclass(frozen=True)
class DisputeNotice:
    """An acquirer's word, by its own delivery, that a dispute was raised, changed or closed."""

    dispute: DisputeFound

    @property
    def order_ref(self) -> str:
        return self.dispute.order_ref


@dataclass(frozen=True)
class EvidenceFile:
    """A document that contests a dispute, checked by the gateway before it is sent."""

    doc_type: str       # a DisputeEvidenceType.code the dispute asked for
    filename: str
    content_type: str   # application/pdf, image/png or image/jpeg
    content: bytes
    note: str = ""
@dataclass(frozen=True)
class CardFields:
    """The processor's own card fields (Acquirer.card_fields): its script draws them inside the
    checkout page and sends the card from the customer's browser straight to the processor, so
    the number never reaches this service (CARD_FORM_MODE=processor). `script` is the address
    the page loads it from; `origins` every origin that script needs (its own, its frames', the
    API it calls), which the page's Content-Security-Policy allows beside 'self' and nothing
    else; `options` what the page starts it with (strings, handed over as data attributes)."""

    script: str
    origins: tuple[str, ...]
    options: dict[str, str] = field(default_factory=dict)
    # What the page's own script (static/checkout/card-fields.js) speaks to the processor's
    # script in: "cashfree-js-v3" (its fields drawn in boxes of our page) or
    # "razorpay-checkout-v1" (the processor's own frame, opened over our page on Pay). The name of
    # a script interface, which any processor speaking it may use, not of an acquirer.
    api: str = "cashfree-js-v3"
    # Whether the fields are drawn in boxes of our page (True) or in the processor's own frame,
    # which its script opens when the customer presses Pay (False).
    inline: bool = True


@dataclass(frozen=True)
class SettlementFound:
    """One payout the acquirer reports (Acquirer.settlements_list): what it paid into the
    merchant's bank account under one UTR. Amounts in integer paise, as the acquirer stated
    them; `gross` and `net` are None when it did not state them."""

    settlement_id: str          # the acquirer's own id, unique within the acquirer
    utr: str
    gross: int | None
    fees: int
    tax: int
    net: int | None
    settled_at: datetime | None = None
    period_start: datetime | None = None
    period_end: datetime | None = None
    status: str = ""


# A settlement event's kinds (SettlementEventFound.kind), the words refunds' lines use.
SETTLEMENT_EVENT_KINDS = ("payment", "refund", "chargeback", "adjustment")


@dataclass(frozen=True)
class SettlementEventFound:
    """One event inside a settlement (Acquirer.settlement_events): a payment, refund,
    chargeback or adjustment, with the acquirer's fee and the tax on it, in paise. `amount` is
    never negative except an adjustment's (a debit). `order_ref` names the payment as the
    gateway named it to the acquirer (its sabpaisaTxnId), `refund_ref` a refund as
    Acquirer.refund_ref names ours; either is empty when the event names none."""

    event_id: str               # unique within its settlement
    kind: str                   # one of SETTLEMENT_EVENT_KINDS
    amount: int
    fee: int = 0
    tax: int = 0
    order_ref: str = ""
    payment_ref: str = ""       # the acquirer's own id of the payment
    refund_ref: str = ""
    event_type: str = ""        # the acquirer's own word for it


@dataclass(frozen=True)
class SettlementPage:
    """One page of settlements or of a settlement's events; `cursor` asks for the next page,
    "" on the last one."""

    items: tuple
    cursor: str = ""


@dataclass(frozen=True)
class SettlementNotice:
    """An acquirer's word, by its own delivery, that it paid a settlement out: the settlement as
    its report would state it. Its events are read through Acquirer.settlement_events."""

    settlement: SettlementFound

    @property
    def order_ref(self) -> str:
        return ""  # a payout names no one payment


class NoticeRejected(Exception):
    """An inbound delivery that is not to be trusted (no or a wrong signature); nothing of it
    is recorded. The message says why, never echoing a secret."""


class NoticeNotFresh(NoticeRejected):
    """Genuinely signed, but outside the acquirer's freshness window (a replay, a clock far off)."""


class NoticeMalformed(NoticeRejected):
    """Genuinely signed, but not a body this acquirer sends."""


class AcquirerError(Exception):
    """The acquirer failed to process the request (maps to PROCESSING_ERROR)."""


class AcquirerUnavailable(AcquirerError):
    """The acquirer did not answer in time or is down (maps to SERVICE_UNAVAILABLE)."""


class AcquirerRefused(AcquirerError):
    """The acquirer refused to start the payment (maps to PAYMENT_FAILED)."""


class Acquirer(Protocol):
    """Everything the gateway asks of an acquirer. The services ask these methods, never which
    acquirer it is: a new one (payments.acquirer.cashfree) implements them, usually on top of
    RealAcquirer's defaults, and is chosen by GATEWAY_ACQUIRER (payments.acquirer.get_acquirer)."""

    name: str
    # The hosted checkout's method codes (gateway.platform.methods.CODES) this acquirer can
    # carry; a method outside it is offered to no merchant.
    methods: frozenset[str]
    # The net banking banks and the wallets the checkout lists (code -> display name), the
    # codes bank_redirect takes.
    banks: dict[str, str]
    wallets: dict[str, str]
    # What a tester may type on the checkout's own 3-D Secure page (the OTP that approves):
    # shown beside it in staging. Empty: no hint (a real acquirer's OTP is the issuer's).
    test_otp: str
    # Whether a payment needs the customer's mobile number before any method starts (Cashfree's
    # create order requires one). The hosted checkout asks the customer for it when the
    # session came without a usable one (payments.services.hosted.customer_phone_needed).
    requires_customer_phone: bool
    # The payer VPAs a tester may type on the checkout's UPI form, shown beside it in staging.
    # Empty: no hint (a real acquirer's payers are real).
    upi_test_vpas: tuple[str, ...]
    # Whether a payment made from the gateway's own upi://pay link (to UPI_PAYEE_VPA, quoting the
    # payment's txn id: payments.services.upi.upi_link) reaches this acquirer matched to the
    # payment, so the checkout may show that link as a QR and an app button. A processor that
    # collects on its own VPAs per order (Cashfree) cannot see it: its checkout takes the payer's
    # VPA instead (upi_collect).
    gateway_upi_link_payable: bool

    # Whether a UPI request it answered PENDING is asked about again with its status query each
    # period until it is final (payments.services.upi.upi_cut_off_requests): its final word
    # comes by a notice (a webhook), which can be lost. The sandbox, whose payer's bank
    # finishes its own PENDING answers (payments.acquirer.sandbox.payer), says False.
    status_query_while_pending: bool

    def upi_vpa_check(self, vpa: str) -> str:
        """The payer VPA a UPI pay request is made from, given `vpa` as the customer typed it
        (well-formed, lower-cased): `vpa` itself, or the VPA it stands for. Raises ValueError,
        with a message the customer can act on, when this acquirer takes no request from it
        (the sandbox: anything but its test VPAs). A real acquirer accepts any VPA here; the
        payer's bank decides."""

    def upi_register(self, *, payment: Payment) -> AcquirerAnswer:
        """S2S: register a UPI QR / intent payment so the acquirer accepts it. PENDING or raises."""

    def upi_status(self, *, payment: Payment, payer_vpa: str) -> AcquirerAnswer:
        """Where the UPI pay request from `payer_vpa` for `payment` stands (the acquirer's
        transaction status query), asked when upi_pay's own answer never reached us: PENDING,
        APPROVED (`reference`: the RRN) or DECLINED. Raises AcquirerRefused when the acquirer
        has no such request (it never arrived), AcquirerUnavailable to be asked again later."""

    def upi_cancel(self, *, payment: Payment, payer_vpa: str) -> AcquirerAnswer:
        """Cancel the UPI pay request from `payer_vpa` of the payment's current attempt (the
        customer chose another method): DECLINED once cancelled (it will never be approved),
        APPROVED (`reference`: the RRN) when the payer approved it first. Raises
        AcquirerUnavailable when it could not be asked."""

    # `return_url`, on the calls that may open the payment at the processor (its order): where
    # the processor sends the customer's browser back to after its own pages, built by the
    # services with `reverse` (payments.services.acquirer_answers.acquirer_return_url); empty
    # for a payment no browser comes back to (S2S).

    def upi_intent(self, *, payment: Payment, return_url: str = "") -> AcquirerAnswer:
        """Hosted: the customer chose to pay by a UPI app (intent on a phone, a QR of the same link
        on a wide screen) for the payment's current attempt: PENDING with `link`, the acquirer's
        own upi://pay link for this attempt (and, in `raw["upi_apps"]`, app name -> that app's own
        link where the acquirer gives them), or PENDING without `link` when the gateway's own link
        (payments.services.upi.upi_link) is the one to pay (the sandbox). Asked again for the same
        attempt it answers the same link. Raises AcquirerRefused / AcquirerError when it could
        not be had (nothing started)."""

    def upi_collect(self, *, payment: Payment, vpa: str, return_url: str = "") -> AcquirerAnswer:
        """Hosted: send a collect request to `vpa`. PENDING (answer later) or DECLINED."""

    def upi_pay(self, *, payment: Payment, payer_vpa: str, return_url: str = "") -> AcquirerAnswer:
        """A customer's UPI app pays the payment's link from `payer_vpa`. PENDING or DECLINED."""

    def card_authorize(self, *, payment: Payment, card: CardInput, return_url: str = "") -> AcquirerAnswer:
        """Start a card payment: CHALLENGE (3-D Secure; `reference` is the challenge's id) or
        DECLINED."""

    def card_fields(self) -> CardFields | None:
        """The processor's own card fields, or None when it has none (the sandbox, whose card
        network is the checkout's own form). Makes no call."""

    def card_fields_open(self, *, payment: Payment, return_url: str = "") -> AcquirerAnswer:
        """The customer pays by card in the processor's own fields (card_fields) for the
        payment's current attempt: open the payment at the processor (its order, with
        `return_url`) and answer PENDING with `reference`, what the fields pay it with (a bearer
        for paying this one order, never stored). The card never comes here: the fields send it
        to the processor, whose 3-D Secure page brings the customer back to `return_url`, where
        call_status(step="card_verify_otp") decides (with no challenge_ref: the attempt's newest
        card payment at the processor). Raises AcquirerRefused when it has no card fields or
        would not open the payment, AcquirerError when it could not be asked (nothing started)."""

    def card_fields_said(self, *, payment: Payment, said: dict[str, str]) -> str:
        """What the processor's card fields said in the customer's browser, brought back to the
        checkout's return address as its parameters (`said`), checked: the processor's id of
        the card payment they name when the processor genuinely signed it for this payment's
        order, "" when they name none (the fields were closed, or this processor signs nothing).
        Nothing is decided by it: the status query (call_status) still says what became of the
        payment. Raises NoticeRejected when they are not the processor's own (a forged or
        altered return), which the return then does not act on."""

    def card_verify_otp(self, *, payment: Payment, otp: str, challenge_ref: str) -> AcquirerAnswer:
        """Finish the 3-D Secure challenge `challenge_ref` (the `reference` of card_authorize's
        CHALLENGE) with the customer's OTP: APPROVED or DECLINED. Without a challenge: DECLINED."""

    def bank_redirect(self, *, payment: Payment, mode: str, bank_code: str, return_url: str = "") -> AcquirerAnswer:
        """Net banking (mode NB) or a wallet (WALLET) `bank_code` (a key of `banks` or
        `wallets`) was chosen: PENDING with `link`, the bank's or wallet's own page to send the
        customer to (who comes back to the checkout's return address, where call_status
        decides); PENDING without `link`, the checkout's own bank page (the sandbox's), which
        answers through bank_authorize; or DECLINED. Moves no money. Raises AcquirerRefused
        (or AcquirerError) when the bank could not be reached: the customer may choose again."""

    def bank_authorize(self, *, payment: Payment, bank_code: str, approved: bool) -> AcquirerAnswer:
        """Net banking or wallet: the bank/wallet page's answer. APPROVED or DECLINED."""

    def transfer_details(self, *, payment: Payment, return_url: str = "") -> TransferAccount:
        """NEFT / RTGS: the account the customer pays the payment's transfer into (called once,
        when the customer picks it: the checkout keeps it). Only for an acquirer whose
        `methods` carry NEFT or RTGS. Raises AcquirerError when it could not be had."""

    def transfer_received(self, *, payment: Payment, amount: int) -> AcquirerAnswer:
        """NEFT / RTGS / challan: funds arrived for the payment's reference. APPROVED."""

    def call_status(self, *, payment: Payment, step: str) -> AcquirerAnswer:
        """What the acquirer answered to the payment's money-moving call `step`
        (card_verify_otp, bank_authorize or transfer_received), asked when that answer never
        reached us (the acquirer's transaction status query): APPROVED (`reference`: the RRN)
        or DECLINED. Raises AcquirerRefused when the acquirer never got such a call,
        AcquirerUnavailable to be asked again later."""

    def refund(self, *, payment: Payment, amount: int, refund_id: str) -> AcquirerAnswer:
        """Return `amount` paise by the payment's original method. APPROVED or DECLINED."""

    def refund_ref(self, refund_id: str) -> str:
        """The id the acquirer knows our refund (or reversal) `refund_id` by, as refund() sends it
        and a RefundNotice names it."""

    # -- what it tells us on its own: its notices, received at POST /acquirer/<name>/webhooks ---

    def notice_verify(self, *, headers, raw_body: bytes) -> NoticeDelivery:
        """The delivery when it is genuinely the acquirer's and fresh. Raises
        NoticeRejected (NoticeNotFresh, NoticeMalformed) otherwise. Has no storage: the inbound
        door records each delivered body once."""

    def notice_parse(self, payload: dict) -> PaymentNotice | RefundNotice | DisputeNotice | SettlementNotice | None:
        """A verified delivery's content as neutral values, carrying the answer the status query
        or the refund call would give for the same state; None: a delivery the gateway has no use
        for (another event type)."""

    def notice_confirm(self, *, payment: Payment, notice: PaymentNotice) -> AcquirerAnswer | None:
        """What the acquirer's status query of the whole payment says of a `notice` that is not
        to be taken at its word (a DECLINED one, or any notice delivered late:
        NoticeDelivery.fresh): its APPROVED answer when an attempt was approved, DECLINED when
        the attempt the notice names is still the newest and failed, None otherwise (nothing
        approved and a newer attempt in flight, or not final yet: leave the payment as it is).
        Raises AcquirerUnavailable when it could not be asked (the acquirer delivers the notice
        again)."""

    def amount_to_acquirer(self, paise: int):
        """`paise` as the acquirer writes an amount (rupees for Cashfree). Exact or ValueError."""

    def amount_from_acquirer(self, value) -> int:
        """An amount as the acquirer writes it, in paise. Exact or ValueError (never rounded)."""

    # -- disputes (chargebacks) raised against payments it carried -------------------------------

    def disputes_of(self, *, payment: Payment) -> list[DisputeFound]:
        """Every dispute the processor holds against `payment` (none: an empty list). Asked by
        the disputes sweep, since a dispute notice can be lost. Raises AcquirerUnavailable when
        it could not be asked."""

    def dispute_get(self, *, processor_id: str) -> DisputeFound:
        """The dispute as it stands now. Raises AcquirerRefused when the processor has no such
        dispute, AcquirerUnavailable when it could not be asked."""

    def dispute_accept(self, *, processor_id: str) -> DisputeFound:
        """Accept the dispute (the merchant will not contest it): the dispute as it then stands.
        Accepting one already accepted answers the same. Raises AcquirerRefused when the
        processor will not take it (already decided), AcquirerUnavailable when not answered."""

    def dispute_evidence_submit(self, *, processor_id: str, evidence: EvidenceFile) -> DisputeFound:
        """Send one document contesting the dispute: the dispute as it then stands. Raises
        AcquirerRefused when the processor refuses it, AcquirerUnavailable when not answered."""

    def reverse(self, *, payment: Payment, bank_rrn: str, amount: int, reversal_id: str) -> AcquirerAnswer:
        """Give back (void, or refund at once where it has settled) the approval `bank_rrn` of
        `amount` paise that the gateway could not accept for `payment` (it had gone final, or
        the attempt was abandoned): APPROVED (`reference`: the reversal's reference) or
        DECLINED (`message` says why). Idempotent on `reversal_id`: sent again after an error,
        it answers as the first time and reverses nothing twice. Raises AcquirerUnavailable
        (or AcquirerError) when it gave no answer: it is sent again later."""

    # -- what it paid out: its settlements, read by refunds.settlements.fetching ----------------

    def settlements_list(self, *, start: datetime | None, end: datetime | None, cursor: str = "") -> SettlementPage:
        """One page of the settlements paid between `start` and `end` (either may be None: open),
        SettlementFound items, `cursor` as the previous page answered it ("" for the first).
        Raises AcquirerUnavailable (or AcquirerError) when it could not be asked; the fetch
        resumes from the same cursor next time."""

    def settlement_events(self, *, settlement_id: str, cursor: str = "") -> SettlementPage:
        """One page of the events inside the settlement `settlement_id` (a SettlementFound's),
        SettlementEventFound items. Raises as settlements_list."""


class RealAcquirer:
    """The defaults of an acquirer that moves real money, for a real one to inherit: any VPA is
    taken (the payer's bank decides), and a UPI request it answered PENDING is asked about
    again until it is final (its callback, or the status query, brings the answer). An
    implementation still provides every call of the Acquirer protocol that moves money or asks
    about it."""

    name = ""
    banks: dict[str, str] = {}
    wallets: dict[str, str] = {}
    test_otp = ""
    requires_customer_phone = False
    upi_test_vpas: tuple[str, ...] = ()
    gateway_upi_link_payable = False
    # Its final word on a UPI request it answered PENDING comes by its callback (a webhook),
    # which can be lost: the payments sweep asks its status query about such a request each
    # period until it is final (payments.services.upi.upi_cut_off_requests). The sandbox,
    # whose payer's bank finishes its own PENDING answers, leaves it unset.
    status_query_while_pending = True

    def upi_vpa_check(self, vpa: str) -> str:
        return vpa

    def card_fields(self) -> CardFields | None:
        return None

    def card_fields_open(self, *, payment: Payment, return_url: str = "") -> AcquirerAnswer:
        raise AcquirerRefused(f"{self.name or 'this acquirer'} has no card fields of its own")

    def card_fields_said(self, *, payment: Payment, said: dict[str, str]) -> str:
        return ""  # its fields sign nothing they say in the browser

    # A processor whose API reports no disputes (none of its own, or not yet carried here): it
    # holds none against any payment, and there is nothing of its to answer. Cashfree overrides
    # all four; a new acquirer inherits these until it carries its processor's dispute calls.

    def disputes_of(self, *, payment: Payment) -> list[DisputeFound]:
        return []

    def dispute_get(self, *, processor_id: str) -> DisputeFound:
        raise AcquirerRefused(f"{self.name or 'this acquirer'} reports no disputes: no dispute {processor_id}")

    def dispute_accept(self, *, processor_id: str) -> DisputeFound:
        raise AcquirerRefused(f"{self.name or 'this acquirer'} reports no disputes: no dispute {processor_id}")

    def dispute_evidence_submit(self, *, processor_id: str, evidence: EvidenceFile) -> DisputeFound:
        raise AcquirerRefused(f"{self.name or 'this acquirer'} reports no disputes: no dispute {processor_id}")

    def settlements_list(self, *, start: datetime | None, end: datetime | None, cursor: str = "") -> SettlementPage:
        """None reported: an acquirer whose settlement report the gateway does not read yet.
        Its successful payments then show as never settled, which is what finance must see."""
        return SettlementPage(items=())

    def settlement_events(self, *, settlement_id: str, cursor: str = "") -> SettlementPage:
        return SettlementPage(items=())
