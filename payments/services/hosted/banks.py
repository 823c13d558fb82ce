"""Methods paid at the customer's bank: net banking and wallets (the bank's page answers at
once), and NEFT, RTGS and cash challans (open until the funds arrive quoting a reference)."""
from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from gateway.core.errors import NotFound, ValidationError
from gateway.core.ids import random_string
from payments.acquirer import get_acquirer
from payments.acquirer.base import AcquirerError
from payments.models import Payment
from payments.services.hosted.session import _ensure_open
from payments.services.hosted.steps import _acquirer_no_answer, _claim, acquirer_call_release, step_answer_apply
from payments.services.transitions import payment_mark_processing

S = Payment.Status
M = Payment.Mode

# NEFT, RTGS and cash challans stay open this long after the customer picks them: long enough
# for a transfer made on a Friday evening to arrive after a bank holiday Monday.
TRANSFER_VALIDITY = timedelta(hours=72)
TRANSFER_MODES = (M.NEFT, M.RTGS, M.CHALLAN)
BANK_MODES = (M.NB, M.WALLET)

# Where transfers are paid. The sandbox acquirer's collection account; a real acquirer gives
# its own (a virtual account per payment, so funds are matched without the customer's help).
TRANSFER_BENEFICIARY = {
    "name": "Gateway Collections Escrow",
    "bank": "Sandbox Escrow Bank",
    "ifsc": "SBXG0000001",
    "branch": "Mumbai Fort",
    "account_prefix": "222333",
}


# --- Net banking and wallets --------------------------------------------------------------

def hosted_bank_start(*, payment: Payment, mode: str, bank_code: str) -> Payment:
    """The customer picked a bank (NB) or wallet (WALLET): PENDING -> PROCESSING until the
    bank's page answers (hosted_bank_complete). Raises InvalidTransition when not open."""
    if mode not in BANK_MODES:
        raise ValueError(f"{mode} is not net banking or a wallet")
    _ensure_open(payment)
    return payment_mark_processing(payment_id=payment.pk, payment_mode=mode, bank_code=bank_code,
                                   detail={"method": mode, "bank": bank_code})


def hosted_bank_complete(*, payment: Payment, approved: bool) -> Payment:
    """The bank's or wallet's page answered: SUCCESS with its reference, or FAILED. One answer
    at a time reaches the acquirer, and none once the payment is final.
    Raises InvalidTransition when the payment is not waiting for that page, ValidationError
    (decision) while another answer of it is being confirmed, ServiceUnavailable (decision)
    when the acquirer did not answer (the payment stays PROCESSING)."""
    payment = _claim(payment, modes=BANK_MODES, target=S.SUCCESS if approved else S.FAILED, field="decision")
    try:
        answer = get_acquirer().bank_authorize(payment=payment, bank_code=payment.bank_code, approved=approved)
    except AcquirerError as exc:
        _acquirer_no_answer(payment.pk, "bank_authorize", exc, field="decision")
    return step_answer_apply(payment, "bank_authorize", answer)


# --- NEFT, RTGS and cash challan ----------------------------------------------------------

def new_transfer_reference() -> str:
    """'GW' and 12 digits: short enough to write on a cash challan, and the tail of the virtual
    account number. Unique (constraint payment_unique_transfer_reference)."""
    return "GW" + random_string("0123456789", 12)


def transfer_details(payment: Payment) -> dict:
    """What the challan shows: where to pay, the reference to quote, and until when."""
    reference = payment.transfer_reference
    return {
        "beneficiary": TRANSFER_BENEFICIARY["name"],
        "bank": TRANSFER_BENEFICIARY["bank"],
        "branch": TRANSFER_BENEFICIARY["branch"],
        "ifsc": TRANSFER_BENEFICIARY["ifsc"],
        "account": TRANSFER_BENEFICIARY["account_prefix"] + reference[2:],
        "reference": reference,
        "valid_until": payment.expires_at,
    }


def hosted_transfer_start(*, payment: Payment, mode: str) -> Payment:
    """The customer picked NEFT, RTGS or a cash challan: PENDING -> PROCESSING with a unique
    reference, open for TRANSFER_VALIDITY (the session's deadline is extended). The payment
    stays PROCESSING until the funds arrive (hosted_transfer_received) or it expires (the
    beat sweep; a queued task would outlive Redis's visibility timeout).
    Raises InvalidTransition when the session is no longer open."""
    if mode not in TRANSFER_MODES:
        raise ValueError(f"{mode} is not a bank transfer")
    _ensure_open(payment)
    return payment_mark_processing(
        payment_id=payment.pk, payment_mode=mode, transfer_reference=new_transfer_reference(),
        expires_at=timezone.now() + TRANSFER_VALIDITY, detail={"method": mode},
    )


def hosted_transfer_received(*, reference: str) -> Payment:
    """Funds arrived quoting `reference` (in staging: the tester says so on /sandbox/transfers).
    PROCESSING -> SUCCESS with the bank's reference; the same funds reported twice are
    confirmed with the bank once. Raises NotFound for an unknown reference, InvalidTransition
    when the payment is final already (paid, or expired unpaid), ValidationError (reference)
    while the same transfer is being confirmed or when the bank could not confirm it."""
    payment = (Payment.objects.select_related("merchant")
               .filter(transfer_reference=reference.strip().upper(), payment_mode__in=TRANSFER_MODES).first())
    if payment is None:
        raise NotFound("no open transfer has that reference")
    payment = _claim(payment, modes=TRANSFER_MODES, target=S.SUCCESS, field="reference")
    try:
        answer = get_acquirer().transfer_received(payment=payment, amount=payment.amount)
    except AcquirerError as exc:
        # Funds that could not be matched stay with the bank; the payment stays open.
        acquirer_call_release(payment.pk)
        raise ValidationError("the bank could not confirm the transfer; try again", field="reference") from exc
    applied = step_answer_apply(payment, "transfer_received", answer)
    if applied is None:
        raise ValidationError("the bank could not confirm the transfer; try again", field="reference")
    return applied
