"""Payments of both flows (hosted checkout and S2S UPI) and their append-only event log."""
from __future__ import annotations

import string

from django.db import models
from django.db.models import Q

from gateway.core.ids import random_string
from gateway.platform.models import Merchant
from payments.lookups import email_key_expression, phone_key_expression

_ALPHABET = string.ascii_uppercase + string.digits


def new_txn_id() -> str:
    return "SP" + random_string(_ALPHABET, 18)


def new_payment_id() -> str:
    return "pay_" + random_string(string.ascii_letters + string.digits, 20)


class Payment(models.Model):
    class Status(models.TextChoices):
        PENDING = "PENDING"          # hosted session open, no method chosen yet
        PROCESSING = "PROCESSING"    # a method is in flight (S2S on creation; hosted after choosing)
        SUCCESS = "SUCCESS"
        FAILED = "FAILED"
        EXPIRED = "EXPIRED"

    class Flow(models.TextChoices):
        HOSTED = "HOSTED"
        S2S = "S2S"

    class Mode(models.TextChoices):
        UPI = "UPI"
        CARD = "CARD"
        NB = "NB", "Net banking"
        WALLET = "WALLET"
        NEFT = "NEFT"
        RTGS = "RTGS"
        CHALLAN = "CHALLAN", "Cash challan"

    class S2SMode(models.TextChoices):
        UPI_QR = "UPI_QR"
        UPI_INTENT = "UPI_INTENT"

    FINAL_STATUSES = (Status.SUCCESS, Status.FAILED, Status.EXPIRED)
    # A hosted payment ends FAILED at its third failed attempt: a guard against card testing.
    MAX_FAILED_ATTEMPTS = 3

    # Indexed by the (merchant, ...) indexes below, which also serve lookups by merchant alone.
    merchant = models.ForeignKey(Merchant, on_delete=models.PROTECT, related_name="payments", db_index=False)
    flow = models.CharField(max_length=10, choices=Flow.choices)
    # Unique by constraints (Meta), not unique=True, which would add a second, LIKE-only
    # index to each: they are only ever looked up exactly.
    sabpaisa_txn_id = models.CharField("sabpaisaTxnId", max_length=24, default=new_txn_id)
    payment_id = models.CharField("paymentId", max_length=32, default=new_payment_id)
    merchant_txn_id = models.CharField("merchantTxnId", max_length=100)
    amount = models.BigIntegerField(help_text="paise")
    currency = models.CharField(max_length=3, default="INR")
    status = models.CharField(max_length=12, choices=Status.choices)
    payment_mode = models.CharField(max_length=10, choices=Mode.choices, blank=True)
    s2s_mode = models.CharField(max_length=12, choices=S2SMode.choices, blank=True)

    customer_name = models.CharField(max_length=100, blank=True)
    # Searched through their normalised forms (payments.lookups), indexed below.
    customer_email = models.CharField(max_length=255, blank=True)
    customer_phone = models.CharField(max_length=20, blank=True)
    description = models.CharField(max_length=500, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    udf = models.JSONField("udf1..udf20", default=dict, blank=True)
    # The optional order fields as sent (customerId, addresses, lineItems, orderSummary...),
    # checked by payments.api.order_serializers; shown in the support console.
    order_details = models.JSONField("order details", default=dict, blank=True)
    return_url = models.URLField(max_length=2000, blank=True)
    # Hosted: the checkout page's language as the merchant sent it (`language`, at most 10).
    language = models.CharField(max_length=10, blank=True)
    # S2S: where this payment's webhooks go instead of the merchant's address (webhookUrl).
    webhook_url = models.CharField("webhook address of this payment", max_length=500, blank=True)

    # Hosted checkout: the session secret is shown once and kept as a SHA-256 hash.
    client_secret_hash = models.CharField(max_length=64, blank=True)
    expires_at = models.DateTimeField()

    # What the acquirer told us. Card data is limited to what the card-data rules allow.
    bank_rrn = models.CharField("bank reference (RRN)", max_length=40, blank=True)
    paid_amount = models.BigIntegerField(null=True, blank=True, help_text="paise")
    failure_reason = models.CharField(max_length=200, blank=True)
    payer_vpa = models.CharField(max_length=100, blank=True)
    card_last4 = models.CharField(max_length=4, blank=True)
    card_network = models.CharField(max_length=20, blank=True)
    card_issuer = models.CharField(max_length=60, blank=True)
    # The acquirer's 3-D Secure challenge, written only when it answered CHALLENGE: an OTP is
    # taken for this payment only while it is set, and goes to the acquirer with it.
    card_challenge_ref = models.CharField(max_length=64, blank=True)
    # Set (committed) before a method's final call to the acquirer, cleared when the answer is
    # recorded or when there was none: the one claim that keeps a second submission, or a
    # stale one, from asking the acquirer again (payments.services.hosted).
    acquirer_call_started_at = models.DateTimeField(null=True, blank=True)
    bank_code = models.CharField(max_length=20, blank=True, help_text="net banking bank or wallet code")
    # The acquirer that took the payment (a name of payments.acquirer.IMPLEMENTATIONS), chosen by
    # the merchant's route when the first method opened an order there (payments.services.routing)
    # and changed only by that call's one failover. Every later call for the payment (status query,
    # refund, reversal, notices) goes to it. Empty: not routed yet; the configured acquirer.
    acquirer = models.CharField(max_length=20, blank=True, default="", db_default="",
                                help_text="the acquirer that took the payment")
    # Hosted checkout retries (CONTRACT.md): each method the customer starts is the next attempt
    # (PENDING -> PROCESSING); a failed one returns the payment to PENDING with its reason shown
    # on the page, and the MAX_FAILED_ATTEMPTS-th failure ends it. `attempt` ties a late answer
    # (a UPI approval of a request the customer left) to the attempt it belongs to.
    attempt = models.PositiveSmallIntegerField(default=0, help_text="hosted: methods started so far")
    failed_attempts = models.PositiveSmallIntegerField(default=0)
    attempt_error = models.CharField(max_length=200, blank=True, help_text="why the last attempt failed")
    # The payment's refunds in paise: returned to the customer (SUCCESS refunds) and on their way
    # (INITIATED ones; a FAILED refund counts in neither). Kept by refunds' creation and
    # transitions under this row's lock (payments.services.refund_totals), so that a reader of
    # the payment, the enquiry first, needs no other table; tests/conftest.py holds them equal
    # to the sums of the refunds after every test.
    refunded_amount = models.BigIntegerField(default=0, help_text="paise of SUCCESS refunds")
    refund_pending_amount = models.BigIntegerField(default=0, help_text="paise of INITIATED refunds")
    # The payment's newest dispute not yet decided, as refunds states it (payments.services.
    # dispute_mark): {"disputeId", "status", "type", "amount", "respondBy"}, or null. The enquiry
    # shows it from this row, so payments reads nothing of refunds (docs/disputes.md).
    open_dispute = models.JSONField(null=True, blank=True)
    # Looked up through payment_unique_transfer_reference (Meta), which holds every non-empty one.
    transfer_reference = models.CharField(max_length=40, blank=True,
                                          help_text="NEFT/RTGS/challan reference the customer quotes")

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # One merchantTxnId per merchant across both flows: the database is the guarantee.
            models.UniqueConstraint(fields=["merchant", "merchant_txn_id"], name="payment_unique_merchant_txn"),
            models.UniqueConstraint(fields=["sabpaisa_txn_id"], name="payment_unique_sabpaisa_txn_id"),
            models.UniqueConstraint(fields=["payment_id"], name="payment_unique_payment_id"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="payment_amount_positive"),
            models.CheckConstraint(condition=Q(paid_amount__isnull=True) | Q(paid_amount__gt=0),
                                   name="payment_paid_amount_positive"),
            models.CheckConstraint(condition=Q(refunded_amount__gte=0) & Q(refund_pending_amount__gte=0),
                                   name="payment_refund_totals_not_negative"),
            # Incoming NEFT/RTGS/cash deposits are matched to a payment by this reference alone.
            models.UniqueConstraint(fields=["transfer_reference"], condition=~Q(transfer_reference=""),
                                    name="payment_unique_transfer_reference"),
        ]
        # Every index is paid for on every payment written (S2S and hosted creation insert one
        # each), so each is here for a query that needs it, and none repeats another's leading
        # columns: status and merchant lookups use the composite indexes, expiry the partial one.
        indexes = [
            models.Index(fields=["merchant", "-created_at"], name="payment_merchant_created"),
            # The expiry sweep scans only open payments.
            models.Index(fields=["expires_at"], name="payment_open_expiry",
                         condition=Q(status__in=["PENDING", "PROCESSING"])),
            # The support console (docs/console.md): every identifier staff search by is an exact
            # lookup on an index, and every list filter walks an index in the list's order.
            models.Index(fields=["merchant_txn_id"], name="payment_merchant_txn_id"),
            models.Index(fields=["bank_rrn"], name="payment_bank_rrn"),
            models.Index(email_key_expression(), name="payment_email_key"),
            models.Index(phone_key_expression(), name="payment_phone_key"),
            models.Index(fields=["status", "-created_at"], name="payment_status_created"),
            models.Index(fields=["payment_mode", "-created_at"], name="payment_mode_created"),
            models.Index(fields=["merchant", "status", "-created_at"], name="payment_merchant_status"),
            # UPI pay requests whose answer may have been cut off (payments.services.upi,
            # upi_unanswered_reconcile): the few open UPI payments a payer has claimed.
            models.Index(fields=["id"], name="payment_upi_claimed",
                         condition=Q(status="PROCESSING", payment_mode="UPI") & ~Q(payer_vpa="")),
            # Hosted payments whose customer may be on the acquirer's page (payments.services.
            # hosted.pages, acquirer_pages_reconcile, PAGE_MODES): the few open card, bank and
            # wallet payments with no call in flight.
            models.Index(fields=["id"], name="payment_page_open",
                         condition=Q(status="PROCESSING", payment_mode__in=["CARD", "NB", "WALLET"],
                                     acquirer_call_started_at__isnull=True)),
            # Hosted steps' acquirer calls whose answer may have been cut off
            # (payments.services.cutoff): the few payments with a call claimed and not answered.
            models.Index(fields=["acquirer_call_started_at"], name="payment_call_claimed",
                         condition=Q(acquirer_call_started_at__isnull=False)),
            # The settlement export: one merchant's successful payments completed on one day.
            models.Index(fields=["merchant", "completed_at"], name="payment_settlement",
                         condition=Q(status="SUCCESS")),
        ]
        permissions = [("export_settlement", "Can download settlement exports")]

    def __str__(self) -> str:
        return f"{self.sabpaisa_txn_id} {self.merchant_txn_id} {self.status}"

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL_STATUSES

    @property
    def enquiry_status(self) -> str:
        """The interface's enquiry enum has no PROCESSING: it reads as PENDING."""
        return self.Status.PENDING if self.status == self.Status.PROCESSING else self.status


class PaymentLink(models.Model):
    """A payment link staff made in the console (payments.services.links): a hosted payment
    whose session lasts up to 30 days, opened at /pay/<token> rather than
    checkoutUrl?clientSecret=. Its merchantTxnId is the link's id (`plink_...`), so enquiry,
    webhooks, refunds and settlement treat it as the hosted payment it is; its status is the
    payment's (`state`)."""

    payment = models.OneToOneField(Payment, on_delete=models.PROTECT, related_name="link")
    # The address's secret part: found by its SHA-256 (unique), kept encrypted so the console
    # can show the address again.
    token_hash = models.CharField(max_length=64, unique=True)
    token_encrypted = models.TextField()
    created_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    CANCELLED_REASON = "payment link cancelled"

    class Meta:
        permissions = [("cancel_paymentlink", "Can cancel unpaid payment links")]

    def __str__(self) -> str:
        return self.payment.merchant_txn_id

    @property
    def state(self) -> str:
        """active (open, maybe being paid), paid, cancelled, failed or expired."""
        status = self.payment.status
        if status in (Payment.Status.PENDING, Payment.Status.PROCESSING):
            return "active"
        if status == Payment.Status.SUCCESS:
            return "paid"
        if status == Payment.Status.FAILED and self.payment.failure_reason == self.CANCELLED_REASON:
            return "cancelled"
        return status.lower()


class PaymentEvent(models.Model):
    """Append-only story of a payment: status changes, acquirer answers, redirects."""

    class Kind(models.TextChoices):
        STATUS = "status"
        ACQUIRER = "acquirer"
        REDIRECT = "redirect"
        NOTE = "note"
        # A late approval's reversal (payments.models.Reversal): its status changes.
        REVERSAL = "reversal"

    # Indexed by paymentevent_payment_time, whose first column it is.
    payment = models.ForeignKey(Payment, on_delete=models.CASCADE, related_name="events", db_index=False)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    from_status = models.CharField(max_length=12, blank=True)
    to_status = models.CharField(max_length=12, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["payment", "created_at"], name="paymentevent_payment_time")]

    def __str__(self) -> str:
        return f"{self.kind} {self.from_status}->{self.to_status}"


class IdempotencyRecord(models.Model):
    """One X-Idempotency-Key of one merchant on a creation (S2S payment, hosted session, refund)
    and the response it got.

    The row is committed "in flight" (no response yet, `expires_at` as a short lease) before the
    acquirer is called, with no lock held during the call; concurrent requests with the same key
    wait by polling it and then answer with the stored response, and take the key over if the
    lease lapses (payments.services.idempotency). Once it holds a response it is kept for at
    least IDEMPOTENCY_TTL, then deleted by the beat.
    """

    # Indexed by idempotency_unique_merchant_key, whose first column it is.
    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="idempotency_records",
                                 db_index=False)
    key = models.CharField(max_length=255)
    # SHA-256 of the request body less timestamp and checksum (payments.services.idempotency).
    fingerprint = models.CharField(max_length=64)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.JSONField(null=True, blank=True)
    payment = models.ForeignKey(Payment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["merchant", "key"], name="idempotency_unique_merchant_key"),
        ]

    def __str__(self) -> str:
        return f"{self.merchant_id}:{self.key}"


class MerchantTxnClaim(models.Model):
    """An S2S creation's hold on a merchantTxnId, taken before the acquirer is called
    (payments.services.txn_claims): two requests with one merchantTxnId (with one idempotency
    key, or another) call the acquirer once between them, so no order is left at the processor
    with no payment of ours.

    It carries the ids the payment will have, so that a creation whose outcome at the acquirer
    is unknown (no answer) is retried under the same sabpaisaTxnId, and the acquirer's own
    idempotency answers it instead of opening a second order. `lease_until` is while the
    holder may still be calling the acquirer; a lapsed claim is taken over only while no
    payment has the merchantTxnId. Kept IDEMPOTENCY_TTL after its lease, then deleted by the
    beat with the idempotency records."""

    # Indexed by txnclaim_unique_merchant_txn, whose first column it is.
    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="+", db_index=False)
    merchant_txn_id = models.CharField(max_length=100)
    sabpaisa_txn_id = models.CharField(max_length=24, default=new_txn_id)
    payment_id = models.CharField(max_length=32, default=new_payment_id)
    # The holder's X-Idempotency-Key ("" without one): its own retry is told to come back, any
    # other request is a duplicate.
    key = models.CharField(max_length=255, blank=True)
    lease_until = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["merchant", "merchant_txn_id"], name="txnclaim_unique_merchant_txn"),
        ]

    def __str__(self) -> str:
        return f"{self.merchant_id}:{self.merchant_txn_id}"


class SandboxAcquirerCall(models.Model):
    """The sandbox acquirer's own record of the money-moving calls it answered (an OTP checked,
    a bank's decision, a transfer credited), which its status query reads back
    (payments.acquirer.sandbox.acquirer, call_status): like a real acquirer, it can say what it
    answered to a call whose answer never reached the gateway. Holds no card data."""

    payment = models.ForeignKey(Payment, on_delete=models.CASCADE, related_name="+", db_index=False)
    step = models.CharField(max_length=30)
    outcome = models.CharField(max_length=12)
    reference = models.CharField(max_length=64, blank=True)
    message = models.CharField(max_length=200, blank=True)
    # The payment's attempt the call belonged to: a status query asks about the current one, never
    # an earlier attempt's answer (hosted retries). For UPI, `step` upi_cancel marks a request
    # the gateway cancelled, which the sandbox payer's bank then never approves.
    attempt = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["payment", "step", "-id"], name="sandbox_call_payment_step")]

    def __str__(self) -> str:
        return f"{self.payment_id} {self.step}: {self.outcome}"


class SandboxDispute(models.Model):
    """The sandbox acquirer's own disputes (its processor's side of a chargeback), which its
    dispute calls read and answer (payments.acquirer.sandbox.disputes). The gateway's Dispute
    rows (refunds) are its record of them, as of a real processor's."""

    processor_id = models.CharField(max_length=32, unique=True)
    payment = models.ForeignKey(Payment, on_delete=models.CASCADE, related_name="+")
    # Where the sandbox's case stands before its clock is applied (payments.acquirer.sandbox.disputes).
    stage = models.CharField(max_length=20)
    kind = models.CharField(max_length=20, default="chargeback")
    amount = models.BigIntegerField(help_text="paise")
    respond_by = models.DateTimeField()
    evidence = models.JSONField(default=list, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    opened_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.processor_id} {self.stage}"


class Reversal(models.Model):
    """Money the acquirer approved for a payment that could not take it: the approval arrived
    after the payment went final (EXPIRED or FAILED: the merchant was told it did not happen),
    or for an attempt the customer had abandoned, or at an acquirer the payment failed over
    from. The gateway gives it back through the acquirer that approved (Acquirer.reverse) by itself (payments.services.reversals); its status changes
    only there, checked against payments.state.REVERSAL_TRANSITIONS, each change a
    PaymentEvent of kind `reversal` in the payment's story."""

    class Status(models.TextChoices):
        PENDING = "PENDING"      # to be sent to the acquirer (again, after an error)
        REVERSED = "REVERSED"    # the acquirer gave the money back; `reference` is its reference
        FAILED = "FAILED"        # the acquirer refused: a person must return the money
        SETTLED = "SETTLED"      # a person returned the money another way (`note` says how)

    FINAL_STATUSES = (Status.REVERSED, Status.SETTLED)

    payment = models.ForeignKey(Payment, on_delete=models.PROTECT, related_name="reversals")
    # Where the approval was taken, when not at the payment's own acquirer: one this payment
    # failed over from, which approved its order there after all (docs/decisions.md, "Two
    # acquirers"). Empty: the payment's acquirer (Payment.acquirer).
    acquirer = models.CharField(max_length=20, blank=True, default="", db_default="",
                                help_text="the acquirer that approved, when not the payment's own")
    # The late approval: the acquirer call that approved, its bank reference and the amount.
    step = models.CharField(max_length=40)
    bank_rrn = models.CharField("approval's bank reference (RRN)", max_length=40)
    amount = models.BigIntegerField(help_text="paise")
    # What the payment was when the approval arrived, for the console's queue.
    payment_status = models.CharField(max_length=12)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    reference = models.CharField("reversal reference", max_length=40, blank=True)
    failure_reason = models.CharField(max_length=200, blank=True)
    # Sends to the acquirer so far; the next one is not before `next_attempt_at` (a worker
    # holds it until then while the acquirer answers, or an error's backoff runs).
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # SETTLED: who recorded it in the console, and how the money went back.
    settled_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        default_permissions = ("view",)
        constraints = [
            # One approval is reversed once, however often it is reported.
            models.UniqueConstraint(fields=["payment", "bank_rrn"], name="reversal_unique_approval"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="reversal_amount_positive"),
            models.CheckConstraint(condition=~Q(status="REVERSED") | ~Q(reference=""),
                                   name="reversal_reversed_has_reference"),
        ]
        indexes = [
            # The sweep and the console's queue read only the open ones.
            models.Index(fields=["next_attempt_at"], name="reversal_pending_due", condition=Q(status="PENDING")),
            models.Index(fields=["-created_at"], name="reversal_created"),
        ]

    def __str__(self) -> str:
        return f"reversal of {self.bank_rrn} ({self.amount} paise) {self.status}"

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL_STATUSES


class AcquirerNotice(models.Model):
    """A notice an acquirer sent us on its own (a Cashfree webhook about a payment or a refund),
    recorded as received before anything acts on it, then applied through the same transitions
    as the acquirer's answers (gateway.inbound.pipeline).

    Recorded only once its signature and freshness hold, but still untrusted as to what it
    means: `raw_body` is the delivery as received, the bytes that were signed. One row per
    delivered body (`body_sha256`): a replay or a retry of the same body finds it and changes
    nothing, except `deliveries`. A row left RECEIVED (applying it failed, the process died)
    is applied again when the acquirer delivers it again."""

    class Status(models.TextChoices):
        RECEIVED = "RECEIVED"    # recorded, not yet applied
        APPLIED = "APPLIED"      # acted on: `result` says what it changed
        IGNORED = "IGNORED"      # nothing to act on (not final, unknown order, amount mismatch)

    acquirer = models.CharField(max_length=20)
    event_type = models.CharField(max_length=60, blank=True)
    body_sha256 = models.CharField(max_length=64)
    raw_body = models.TextField()
    # The acquirer's own time of the delivery (x-webhook-timestamp).
    sent_at = models.DateTimeField()
    order_id = models.CharField("acquirer's order id", max_length=64, blank=True)
    payment = models.ForeignKey(Payment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RECEIVED)
    result = models.CharField(max_length=200, blank=True)
    deliveries = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        default_permissions = ("view",)
        constraints = [
            # A body delivered twice (a replay, the acquirer's retry) is one notice.
            models.UniqueConstraint(fields=["acquirer", "body_sha256"], name="acquirernotice_unique_body"),
        ]
        indexes = [models.Index(fields=["payment", "created_at"], name="acquirernotice_payment_time")]

    def __str__(self) -> str:
        return f"{self.acquirer} {self.event_type} {self.status}"


class SandboxSettlement(models.Model):
    """The sandbox acquirer's own payouts (payments.acquirer.sandbox.settlements): what it
    would have paid a merchant for one day's payments, T+1, less its fees and 18 % GST on them,
    less refunds, under a UTR of its own. Read back through the protocol
    (Acquirer.settlements_list) like a real acquirer's report. Amounts in paise."""

    settlement_id = models.CharField(max_length=64, unique=True)
    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="+")
    utr = models.CharField(max_length=64)
    period_start = models.DateTimeField()
    period_end = models.DateTimeField()
    gross = models.BigIntegerField()
    fees = models.BigIntegerField()
    tax = models.BigIntegerField()
    net = models.BigIntegerField()
    settled_at = models.DateTimeField(db_index=True)
    # The faults it was told to carry (staging's demonstration switch), for the record.
    faults = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["merchant", "period_start"],
                                               name="sandbox_settlement_one_per_day")]


class SandboxSettlementEvent(models.Model):
    """One event inside a sandbox payout: a payment it approved, a refund it made, as
    SettlementEventFound reads it. Signed amount only for an adjustment. A refund is recorded
    when the sandbox makes it, with no settlement yet: the next day's payout deducts it."""

    settlement = models.ForeignKey(SandboxSettlement, on_delete=models.CASCADE, related_name="events",
                                   null=True, blank=True)
    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="+")
    event_id = models.CharField(max_length=64)
    kind = models.CharField(max_length=16)
    amount = models.BigIntegerField()
    fee = models.BigIntegerField(default=0)
    tax = models.BigIntegerField(default=0)
    order_ref = models.CharField(max_length=64, blank=True)
    refund_ref = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # An event id is the sandbox's own, one per payment or refund (a fault may add others).
        constraints = [models.UniqueConstraint(fields=["event_id"], name="sandbox_settlement_event_unique")]
        indexes = [models.Index(fields=["merchant", "settlement", "created_at"], name="sandbox_event_pending")]


class AcquirerRoute(models.Model):
    """A merchant's ordered choice of acquirers for one method (issue 33), set by staff in the
    console: the first takes the method's payments; the next takes one only when the first fails
    technically at order creation, before any customer step (payments.services.routing). The row
    of method ANY is the merchant's default for methods without a row of their own; without
    either, the configured acquirer (GATEWAY_ACQUIRER) takes everything."""

    ANY = "ANY"
    METHODS = ("ANY", "UPI", "CARD", "NB", "WALLET", "NEFT", "RTGS", "CHALLAN")

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="acquirer_routes")
    method = models.CharField(max_length=10, choices=[(m, m) for m in METHODS])
    # Comma-separated names of payments.acquirer.IMPLEMENTATIONS, in the order tried.
    acquirers = models.CharField(max_length=100, help_text="acquirers in the order tried, comma-separated "
                                                           "(for example: razorpay,cashfree)")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["merchant", "method"], name="acquirer_route_unique_method")]

    def __str__(self) -> str:
        return f"{self.method}: {self.acquirers}"

    @property
    def names(self) -> list[str]:
        return [name.strip() for name in self.acquirers.split(",") if name.strip()]
