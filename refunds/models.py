"""Refunds of successful payments and their append-only story (docs/refunds.md).

A refund is the record a finance team reconciles with: which payment, how much (paise), by
which method the money goes back, what the bank answered and when. Its status changes only
through refunds.services, checked against refunds.state.TRANSITIONS.
"""
from __future__ import annotations

import string

from django.conf import settings
from django.db import models
from django.db.models import Q

from gateway.core.ids import random_string
from gateway.platform.models import Merchant
from payments.models import Payment

REFUND_ID_MAX_LENGTH = 64


def new_refund_id() -> str:
    return "rfnd_" + random_string(string.ascii_letters + string.digits, 20)


class Refund(models.Model):
    class Status(models.TextChoices):
        # SabPaisa's names (issue 17; the interface names none): the official SDK 1.0.1 accepts
        # no others. They were PENDING and PROCESSED before migration 0004.
        INITIATED = "INITIATED"    # accepted; the bank has not answered yet
        SUCCESS = "SUCCESS"        # the bank returned the money; bank_refund_reference is set
        FAILED = "FAILED"          # the bank refused; the amount is refundable again

    class Source(models.TextChoices):
        API = "API", "merchant API"
        ADMIN = "ADMIN", "admin console"

    FINAL_STATUSES = (Status.SUCCESS, Status.FAILED)

    merchant = models.ForeignKey(Merchant, on_delete=models.PROTECT, related_name="refunds")
    payment = models.ForeignKey(Payment, on_delete=models.PROTECT, related_name="refunds")
    # The merchant's own refundId when it sent one, otherwise a generated 'rfnd_...'.
    refund_id = models.CharField("refundId", max_length=REFUND_ID_MAX_LENGTH, default=new_refund_id)
    amount = models.BigIntegerField("refundAmount", help_text="paise")
    currency = models.CharField(max_length=3, default="INR")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.INITIATED, db_index=True)
    reason = models.CharField(max_length=500, blank=True)  # SabPaisa's limit (issue 17)

    # How the money goes back: always the payment's original method, copied at creation so the
    # record still says what happened if the payment row is ever corrected.
    payment_mode = models.CharField(max_length=10, blank=True)
    refund_method = models.CharField(max_length=120, blank=True)

    bank_refund_reference = models.CharField(max_length=40, blank=True, db_index=True)
    failure_reason = models.CharField(max_length=200, blank=True)

    source = models.CharField(max_length=10, choices=Source.choices, default=Source.API)
    # The API key that authenticated the request that created it (none for console refunds): the
    # payment page says when that key had already been rotated by staff (docs/security.md).
    api_key = models.ForeignKey("gateway.ApiKey", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="+")
    initiated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                     on_delete=models.SET_NULL, related_name="+")
    # What the create request asked for, hashed: a repeat with the same refundId must match it.
    request_hash = models.CharField(max_length=64, blank=True, editable=False)

    # Submission to the bank. The refund is not submitted again before `claimed_until`: a
    # worker holds it until then while the bank answers (after that it died, or the bank did not
    # answer), and after a bank error it is the backoff's next attempt time. The pending sweep
    # then submits it again with the same id, most overdue first.
    bank_attempts = models.PositiveIntegerField(default=0)
    claimed_until = models.DateTimeField(null=True, blank=True)
    # REFUND_MAX_BANK_ATTEMPTS submissions got no answer: the sweep stops submitting it and it
    # waits, still INITIATED (its outcome is unknown), for staff to check with the bank.
    needs_review = models.BooleanField(default=False,
                                       help_text="the bank never answered; left INITIATED for staff to check")

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    failed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        default_permissions = ("view",)
        permissions = [("initiate_refund", "Can initiate a refund of a payment")]
        constraints = [
            # The merchant's refundId is its idempotency key: the database is the guarantee.
            models.UniqueConstraint(fields=["merchant", "refund_id"], name="refund_unique_merchant_refund_id"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="refund_amount_positive"),
            models.CheckConstraint(
                condition=~Q(status="SUCCESS") | ~Q(bank_refund_reference=""),
                name="refund_success_has_reference",
            ),
        ]
        indexes = [
            models.Index(fields=["payment", "status"], name="refund_payment_status"),
            # The console finds a refund by its refundId or the bank's reference alone, without
            # the merchant that leads the unique constraint's index.
            models.Index(fields=["refund_id"], name="refund_refund_id"),
            models.Index(fields=["bank_refund_reference"], name="refund_bank_reference"),
            # The refund list (GET /api/v2/refunds without a transaction): a merchant's refunds
            # newest first, or those of one status, read a page at a time from the index.
            models.Index(fields=["merchant", "created_at", "id"], name="refund_merchant_created"),
            models.Index(fields=["merchant", "status", "created_at", "id"], name="refund_merchant_status_created"),
            # The pending sweep scans only open refunds.
            models.Index(fields=["created_at"], name="refund_initiated_created", condition=Q(status="INITIATED")),
        ]

    def __str__(self) -> str:
        return f"{self.refund_id} {self.amount} {self.status}"

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL_STATUSES


class RefundEvent(models.Model):
    """Append-only timeline of a refund: status changes, bank submissions and answers, staff."""

    class Kind(models.TextChoices):
        STATUS = "status"      # a status change (creation included: from_status is empty)
        BANK = "bank"          # a submission to the bank, or its answer/error
        NOTE = "note"

    refund = models.ForeignKey(Refund, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    from_status = models.CharField(max_length=10, blank=True)
    to_status = models.CharField(max_length=10, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    actor_name = models.CharField(max_length=150, blank=True, help_text="staff user, 'merchant API' or 'system'")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        default_permissions = ("view",)
        indexes = [models.Index(fields=["refund", "created_at"], name="refundevent_refund_time")]

    def __str__(self) -> str:
        return f"{self.kind} {self.from_status}->{self.to_status}"


def new_settlement_id() -> str:
    return "stl_" + random_string(string.ascii_letters + string.digits, 20)


class Settlement(models.Model):
    """One payout of an acquirer into a merchant's bank account under one UTR (docs/settlements.md).

    It lives in refunds, the top app, because its lines name a payment or a refund and only
    here are both visible (docs/architecture.md). Every amount is integer paise, as the
    acquirer stated it; whether they add up is refunds.settlements.arithmetic's question."""

    # The id a merchant sees (the API, the console, the export's name): random as a refund's,
    # so that it says nothing of how many settlements other merchants have (docs/settlements.md).
    public_id = models.CharField(max_length=24, unique=True, default=new_settlement_id, editable=False)
    acquirer = models.CharField(max_length=32)
    # Null until the lines name our payments of one merchant (an acquirer account may serve many).
    merchant = models.ForeignKey(Merchant, on_delete=models.PROTECT, related_name="settlements",
                                 null=True, blank=True)
    processor_settlement_id = models.CharField(max_length=64)
    utr = models.CharField(max_length=64, blank=True, default="")
    period_start = models.DateTimeField(null=True, blank=True)
    period_end = models.DateTimeField(null=True, blank=True)
    gross = models.BigIntegerField(default=0)
    fees = models.BigIntegerField(default=0)
    tax = models.BigIntegerField(default=0)
    adjustments = models.BigIntegerField(default=0)   # signed: credits less debits
    refunds = models.BigIntegerField(default=0)
    chargebacks = models.BigIntegerField(default=0)
    net = models.BigIntegerField(default=0)
    status = models.CharField(max_length=32, blank=True, default="")
    settled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The reconciliation's word (refunds.settlements.reconcile): the bank credit this payout
    # arrived as (same UTR, same net), None while none is; when it last looked.
    bank_line = models.ForeignKey("BankStatementLine", on_delete=models.SET_NULL, related_name="settlements",
                                  null=True, blank=True)
    reconciled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["acquirer", "processor_settlement_id"],
                                    name="settlement_unique_processor_id"),
            models.CheckConstraint(condition=Q(gross__gte=0, fees__gte=0, tax__gte=0, refunds__gte=0,
                                               chargebacks__gte=0),
                                   name="settlement_amounts_not_negative"),
            models.CheckConstraint(condition=Q(period_start__isnull=True) | Q(period_end__isnull=True)
                                   | Q(period_end__gte=models.F("period_start")),
                                   name="settlement_period_ordered"),
        ]

    def __str__(self) -> str:
        return f"{self.acquirer} settlement {self.processor_settlement_id}"


class SettlementLine(models.Model):
    """One event inside a settlement: a payment, refund, chargeback or adjustment, with the
    acquirer's fee and the tax on it. `amount` is never negative except an adjustment's, whose
    sign says which way the money went."""

    class Kind(models.TextChoices):
        PAYMENT = "payment"
        REFUND = "refund"
        CHARGEBACK = "chargeback"
        ADJUSTMENT = "adjustment"

    settlement = models.ForeignKey(Settlement, on_delete=models.CASCADE, related_name="lines")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    processor_event_id = models.CharField(max_length=64)
    amount = models.BigIntegerField()
    fee = models.BigIntegerField(default=0)
    tax = models.BigIntegerField(default=0)
    payment = models.ForeignKey(Payment, on_delete=models.PROTECT, related_name="settlement_lines",
                                null=True, blank=True)
    refund = models.ForeignKey(Refund, on_delete=models.PROTECT, related_name="settlement_lines",
                               null=True, blank=True)
    processor_order_id = models.CharField(max_length=64, blank=True, default="")
    processor_payment_id = models.CharField(max_length=64, blank=True, default="")
    processor_refund_id = models.CharField(max_length=64, blank=True, default="")
    event_type = models.CharField(max_length=32, blank=True, default="")  # the acquirer's own word
    # A chargeback line names the dispute the money was taken back for (docs/disputes.md, "The
    # money side"): its payment's dispute at the same acquirer (refunds.settlements.fetching).
    dispute = models.ForeignKey("Dispute", on_delete=models.PROTECT, related_name="settlement_lines",
                                null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["settlement", "processor_event_id"],
                                    name="settlement_line_unique_event"),
            models.CheckConstraint(condition=Q(dispute__isnull=True) | Q(kind="chargeback"),
                                   name="settlement_line_dispute_only_on_chargeback"),
            models.CheckConstraint(condition=Q(kind__in=["payment", "refund", "chargeback", "adjustment"]),
                                   name="settlement_line_kind_known"),
            models.CheckConstraint(condition=Q(fee__gte=0, tax__gte=0), name="settlement_line_fee_tax_not_negative"),
            models.CheckConstraint(condition=Q(kind="adjustment") | Q(amount__gte=0),
                                   name="settlement_line_amount_not_negative"),
            models.CheckConstraint(condition=Q(refund__isnull=True) | Q(kind="refund"),
                                   name="settlement_line_refund_only_on_refund"),
        ]


# -- disputes (chargebacks): docs/disputes.md ------------------------------------------------------
# Here, beside settlements, because refunds is the top app: a lost dispute limits what may still be
# refunded of its payment, and a settlement's chargeback line names the dispute it took money for.

def new_dispute_id() -> str:
    return "dsp_" + random_string(string.ascii_letters + string.digits, 20)


class Dispute(models.Model):
    """A customer's dispute of one payment (a chargeback, a retrieval request, a UPI complaint),
    raised at the processor and answered by the merchant before `respond_by`. Its status moves
    only through refunds.disputes.transitions, checked against refunds.disputes.state.TRANSITIONS;
    the processor's own word is kept beside it (`processor_status`)."""

    class Status(models.TextChoices):
        # The gateway's own words (payments.acquirer.base.DISPUTE_STATUSES).
        OPEN = "open"
        NEEDS_RESPONSE = "needs_response"
        UNDER_REVIEW = "under_review"
        WON = "won"
        LOST = "lost"
        ACCEPTED = "accepted"

    class Kind(models.TextChoices):
        DISPUTE = "dispute"
        CHARGEBACK = "chargeback"
        RETRIEVAL = "retrieval"
        PRE_ARBITRATION = "pre_arbitration"
        ARBITRATION = "arbitration"

    FINAL_STATUSES = (Status.WON, Status.LOST, Status.ACCEPTED)
    # Money taken back from the merchant: the payment's refundable amount shrinks by it.
    DEBITED_STATUSES = (Status.LOST, Status.ACCEPTED)
    # The merchant can still act: accept, or send evidence.
    ANSWERABLE_STATUSES = (Status.OPEN, Status.NEEDS_RESPONSE)

    dispute_id = models.CharField("disputeId", max_length=32, default=new_dispute_id, unique=True)
    merchant = models.ForeignKey(Merchant, on_delete=models.PROTECT, related_name="disputes")
    payment = models.ForeignKey(Payment, on_delete=models.PROTECT, related_name="disputes")
    acquirer = models.CharField(max_length=32)
    processor_dispute_id = models.CharField(max_length=64)
    processor_status = models.CharField(max_length=64, blank=True)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.CHARGEBACK)
    reason_code = models.CharField(max_length=32, blank=True)
    reason_text = models.CharField(max_length=300, blank=True)
    amount = models.BigIntegerField(help_text="paise")
    currency = models.CharField(max_length=3, default="INR")
    status = models.CharField(max_length=20, choices=Status.choices, db_index=True)
    respond_by = models.DateTimeField(null=True, blank=True)
    remarks = models.CharField(max_length=500, blank=True)
    # [{"code": ..., "description": ...}]: the documents the processor prefers.
    preferred_evidence = models.JSONField(default=list, blank=True)
    # What the processor holds (names), and when the merchant's side last answered.
    evidence = models.JSONField(default=list, blank=True)
    evidence_submitted_at = models.DateTimeField(null=True, blank=True)
    accepted_at = models.DateTimeField(null=True, blank=True)
    # The deadline alert (48 h before respond_by with no answer) fired at this time.
    deadline_alerted_at = models.DateTimeField(null=True, blank=True)

    opened_at = models.DateTimeField(null=True, blank=True, help_text="when the processor raised it")
    processor_updated_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    synced_at = models.DateTimeField(null=True, blank=True, help_text="last read from the processor")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        default_permissions = ("view",)
        permissions = [("answer_dispute", "Can accept a dispute or send its evidence")]
        constraints = [
            models.UniqueConstraint(fields=["acquirer", "processor_dispute_id"], name="dispute_unique_processor_id"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="dispute_amount_positive"),
            models.CheckConstraint(condition=Q(status__in=["open", "needs_response", "under_review", "won", "lost",
                                                           "accepted"]), name="dispute_status_known"),
        ]
        indexes = [
            models.Index(fields=["merchant", "created_at", "id"], name="dispute_merchant_created"),
            models.Index(fields=["merchant", "status", "created_at", "id"], name="dispute_merchant_status"),
            # The deadline queue and the alert read only disputes still awaiting the merchant.
            models.Index(fields=["respond_by"], name="dispute_awaiting_by_deadline",
                         condition=Q(status__in=["open", "needs_response"])),
        ]

    def __str__(self) -> str:
        return f"{self.dispute_id} {self.amount} {self.status}"

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL_STATUSES


class DisputeEvent(models.Model):
    """Append-only story of a dispute: opening, every status change, the processor's updates,
    the merchant's answers, the deadline alert."""

    class Kind(models.TextChoices):
        STATUS = "status"        # a status change (opening included: from_status is empty)
        UPDATE = "update"        # the processor changed something else (stage, deadline, remarks)
        ANSWER = "answer"        # the merchant (or staff) accepted or sent evidence
        ALERT = "alert"          # respond_by is near and nothing was answered
        NOTE = "note"

    dispute = models.ForeignKey(Dispute, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    from_status = models.CharField(max_length=20, blank=True)
    to_status = models.CharField(max_length=20, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    actor_name = models.CharField(max_length=150, blank=True, help_text="staff user, 'merchant API' or 'system'")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        default_permissions = ("view",)
        indexes = [models.Index(fields=["dispute", "created_at"], name="disputeevent_dispute_time")]

    def __str__(self) -> str:
        return f"{self.kind} {self.from_status}->{self.to_status}"


class DisputeEvidence(models.Model):
    """One document sent to contest a dispute: checked, stored out of the web root
    (DISPUTE_EVIDENCE_DIR), sent to the processor, deleted after the retention period."""

    dispute = models.ForeignKey(Dispute, on_delete=models.PROTECT, related_name="evidence_files")
    doc_type = models.CharField(max_length=80)
    filename = models.CharField(max_length=120)
    content_type = models.CharField(max_length=40)
    size = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64)
    stored_as = models.CharField(max_length=200, blank=True, help_text="path under DISPUTE_EVIDENCE_DIR; "
                                                                        "empty once deleted")
    sent_at = models.DateTimeField(null=True, blank=True)
    uploaded_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        default_permissions = ("view",)

    def __str__(self) -> str:
        return f"{self.doc_type} {self.filename}"


class DisputeSweepMark(models.Model):
    """Where the disputes sweep left off among recent payments (the last payment pk asked about),
    so each run asks the next batch and the whole window is covered in turn."""

    name = models.CharField(max_length=32, unique=True)
    last_payment_pk = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
class MerchantFeeRate(models.Model):
    """What a merchant agreed to pay the acquirer for one payment method: a percentage (in basis
    points, 1 bp = 0.01 %) of the amount and/or a fixed fee in paise, plus 18 % GST on the fee.
    `method` is a Payment.Mode, or empty for every method the merchant has no row of its own for.
    The arithmetic (rounding half up to the paisa, per line) is
    refunds.settlements.arithmetic.agreed_fee / gst_on; a merchant with no row at all has no
    agreed rate, and its fees are not judged (docs/settlements.md)."""

    merchant = models.ForeignKey(Merchant, on_delete=models.CASCADE, related_name="fee_rates")
    method = models.CharField(max_length=10, blank=True, default="")
    percent_bp = models.PositiveIntegerField(default=0, help_text="basis points of the amount (190 = 1.90 %)")
    fixed = models.BigIntegerField(default=0, help_text="paise per payment")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["merchant", "method"], name="fee_rate_unique_method"),
            models.CheckConstraint(condition=Q(fixed__gte=0, percent_bp__lte=10_000), name="fee_rate_sane"),
        ]

    def __str__(self) -> str:
        return f"{self.merchant_id} {self.method or '*'}: {self.percent_bp} bp + {self.fixed} paise"


class BankStatement(models.Model):
    """One bank statement file, uploaded by finance in the console or read from a folder by
    `manage.py reconcile --statements DIR`. The same file (by its SHA-256) is stored once."""

    class Source(models.TextChoices):
        CONSOLE = "console", "uploaded in the console"
        FOLDER = "folder", "read from a folder"

    name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64, unique=True)
    source = models.CharField(max_length=10, choices=Source.choices)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class BankStatementLine(models.Model):
    """One credit (or debit, negative) on a bank statement: its date, amount in paise, the UTR
    the bank printed and its narration, as the file said (refunds.settlements.statements)."""

    statement = models.ForeignKey(BankStatement, on_delete=models.CASCADE, related_name="lines")
    line_no = models.PositiveIntegerField(help_text="1 is the first row after the header")
    date = models.DateField()
    amount = models.BigIntegerField(help_text="paise; a debit is negative")
    utr = models.CharField(max_length=64, blank=True, default="")
    narration = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["statement", "line_no"], name="bank_line_unique_row"),
        ]
        indexes = [models.Index(fields=["utr"], name="bank_line_utr")]

    def __str__(self) -> str:
        return f"{self.date} {self.utr} {self.amount}"


class ReconException(models.Model):
    """Something the three-way reconciliation (refunds.settlements.reconcile) could not make
    agree: our ledger, the acquirer's settlement lines and the bank statement. One row per
    fault: `subject` names what it is about (`payment:12`, `line:34`, `refund:5`,
    `settlement:6`), and (kind, subject) is unique, so running the reconciliation again never
    adds it twice. Finance resolves it with a note (refunds.settlements.exceptions); its status
    changes only through refunds.settlements.exceptions, checked against its TRANSITIONS."""

    class Kind(models.TextChoices):
        # Each label is the reason finance reads in the exceptions queue.
        NOT_SETTLED = "not_settled", "A successful payment was not settled by its expected date"
        SETTLED_TWICE = "settled_twice", "A payment was settled more than once"
        AMOUNT_MISMATCH = "amount_mismatch", "The settled amount differs from the payment's amount"
        FEE_MISMATCH = "fee_mismatch", "The fee differs from the merchant's agreed rate"
        TAX_NOT_GST = "tax_not_gst", "The tax is not 18% GST on the fee"
        REFUND_MISMATCH = "refund_mismatch", "A refund was not deducted, or was deducted more than once"
        UNKNOWN_REFERENCE = "unknown_reference", "A settlement line names a payment or refund we don't know"
        BANK_UNMATCHED = "bank_unmatched", "The settlement's UTR and net amount are not on the bank statement"
        UNBALANCED = "unbalanced", "The settlement's own figures do not add up to its net"

    class Status(models.TextChoices):
        OPEN = "open"
        RESOLVED = "resolved"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    subject = models.CharField(max_length=40)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    merchant = models.ForeignKey(Merchant, on_delete=models.PROTECT, related_name="recon_exceptions",
                                 null=True, blank=True)
    settlement = models.ForeignKey(Settlement, on_delete=models.CASCADE, related_name="exceptions",
                                   null=True, blank=True)
    line = models.ForeignKey(SettlementLine, on_delete=models.CASCADE, related_name="exceptions",
                             null=True, blank=True)
    payment = models.ForeignKey(Payment, on_delete=models.PROTECT, related_name="recon_exceptions",
                                null=True, blank=True)
    refund = models.ForeignKey(Refund, on_delete=models.PROTECT, related_name="recon_exceptions",
                               null=True, blank=True)
    bank_line = models.ForeignKey(BankStatementLine, on_delete=models.SET_NULL, related_name="exceptions",
                                  null=True, blank=True)
    # What was expected and what was found, in paise, when the fault is about an amount.
    expected = models.BigIntegerField(null=True, blank=True)
    actual = models.BigIntegerField(null=True, blank=True)
    # The facts that show it (ids, amounts, dates), for the queue and the audit.
    evidence = models.JSONField(default=dict, blank=True)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")
    resolution_note = models.TextField(blank=True, default="")
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kind", "subject"], name="recon_exception_unique_fault"),
            models.CheckConstraint(condition=Q(status="open") | Q(resolved_at__isnull=False),
                                   name="recon_exception_resolved_has_time"),
        ]
        indexes = [models.Index(fields=["status", "-created_at"], name="recon_exception_queue"),
                   models.Index(fields=["merchant", "status", "-created_at"], name="recon_exception_merchant")]

    def __str__(self) -> str:
        return f"{self.kind} {self.subject} {self.status}"


class SettlementFetch(models.Model):
    """Where the walk over one acquirer account's settlement report stands
    (refunds.settlements.fetching): the period being read, the cursor of the next page to ask
    for (empty: from the first page), and the end of the last walk that finished. A fetch cut
    short (a timeout, a deploy) resumes from `cursor` instead of starting over."""

    acquirer = models.CharField(max_length=32, unique=True)
    window_start = models.DateTimeField(null=True, blank=True)
    window_end = models.DateTimeField(null=True, blank=True)
    cursor = models.CharField(max_length=1000, blank=True, default="")
    pages_read = models.PositiveIntegerField(default=0, help_text="of the current walk")
    finished_until = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.acquirer} settlements fetched until {self.finished_until}"
