"""What every acquirer must do, run over every row of the table of implementations
(payments.acquirer.IMPLEMENTATIONS): approve, decline, not final yet, unreachable, refund,
reverse, notice parsing and the money round trip, plus the package's shape (every member of the
protocol, its settings check, its docs page). A new acquirer is one package, one row, one docs
page and one harness (harnesses.py); this test names whatever it is missing."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.utils.module_loading import import_string

from payments.acquirer import IMPLEMENTATIONS, settings_problems
from payments.acquirer.base import (
    Acquirer,
    AcquirerAnswer,
    AcquirerRefused,
    CardFields,
    AcquirerUnavailable,
    NoticeDelivery,
    NoticeRejected,
    Outcome,
    PaymentNotice,
    SettlementEventFound,
    SettlementFound,
)
from payments.models import Payment
from refunds.models import SettlementLine
from refunds.settlements.arithmetic import gst_on
from refunds.settlements.fetching import settlements_fetch
from refunds.settlements.reconcile import reconcile
from tests.acquirer_cashfree.double import cashfree_double  # noqa: F401 - a fixture of CashfreeHarness
from tests.acquirer_razorpay.double import razorpay_double  # noqa: F401 - a fixture of RazorpayHarness
from tests.acquirers.harnesses import HARNESSES
from tests.support.factories import make_merchant, make_payment

ROOT = Path(__file__).resolve().parents[2]
NAMES = sorted(IMPLEMENTATIONS)
S = Payment.Status


def protocol_members() -> set[str]:
    members = {name for name in Acquirer.__annotations__}
    members |= {name for name, value in vars(Acquirer).items() if inspect.isfunction(value)}
    return {name for name in members if not name.startswith("_")}


@pytest.fixture(params=NAMES)
def harness(request, db):
    maker = HARNESSES.get(request.param)
    if maker is None:
        pytest.fail(f"acquirer {request.param!r} has a row but no contract harness: add one to tests/acquirers/harnesses.py")
    return maker(request)


@pytest.fixture
def payment(db) -> Payment:
    shop = make_merchant()
    payment = make_payment(shop, amount=25000, status=S.PENDING)
    Payment.objects.filter(pk=payment.pk).update(customer_phone="9876543210", customer_email="asha@example.in",
                                                 customer_name="Asha Rao")
    return Payment.objects.select_related("merchant").get(pk=payment.pk)


# -- the package's shape ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_the_implementation_has_every_member_of_the_protocol(name):
    adapter = import_string(IMPLEMENTATIONS[name].adapter)
    missing = sorted(member for member in protocol_members() if not hasattr(adapter, member))
    assert not missing, f"{name} lacks {missing} of payments.acquirer.base.Acquirer"


@pytest.mark.parametrize("name", NAMES)
def test_the_package_checks_its_own_settings_and_has_a_docs_page(name):
    row = IMPLEMENTATIONS[name]
    assert row.adapter.startswith(f"payments.acquirer.{name}.") and row.settings_check.startswith(
        f"payments.acquirer.{name}.")
    assert isinstance(settings_problems(name, django_settings), list)
    assert (ROOT / row.docs).exists(), f"{name}'s docs page {row.docs} does not exist"


def test_nothing_outside_an_acquirers_package_compares_with_its_name():
    found = []
    for name in NAMES:
        literal = rf"""["']{re.escape(name)}["']"""
        compares = re.compile(rf"""[!=]=\s*{literal}|{literal}\s*[!=]=|\bin\s*[(\[{{][^)\]}}]*{literal}""")
        for package in ("gateway", "payments", "refunds", "tokens", "webhooks"):
            for path in sorted((ROOT / package).rglob("*.py")):
                if "payments/acquirer" in path.as_posix():
                    continue
                for number, line in enumerate(path.read_text().splitlines(), 1):
                    if compares.search(line):
                        found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "ask the protocol, not the name:\n" + "\n".join(found)


# -- what it answers -------------------------------------------------------------------------------

def challenged(harness, acquirer, payment):
    answer = acquirer.card_authorize(payment=payment, card=harness.card)
    assert answer.outcome == Outcome.CHALLENGE and answer.reference
    Payment.objects.filter(pk=payment.pk).update(card_challenge_ref=answer.reference, payment_mode="CARD")
    payment.refresh_from_db()
    return answer.reference


def approved(harness, acquirer, payment) -> AcquirerAnswer:
    challenge = challenged(harness, acquirer, payment)
    otp = harness.settle_card(payment, challenge, approved=True)
    answer = acquirer.card_verify_otp(payment=payment, otp=otp, challenge_ref=challenge)
    assert answer.outcome == Outcome.APPROVED and answer.reference
    return answer


def test_approve(harness, payment):
    acquirer = harness.acquirer()
    answer = approved(harness, acquirer, payment)
    # The status query of the same call says the same.
    assert acquirer.call_status(payment=payment, step="card_verify_otp").reference == answer.reference


def test_a_payout_reads_back_as_neutral_settlement_values(harness, payment):
    """What the acquirer paid out for an approved payment, through the protocol: one settlement
    whose payment event names the payment by our txn id, with its amount, fee and the GST on it,
    and a net that is the gross less both."""
    acquirer = harness.acquirer()
    approved(harness, acquirer, payment)
    harness.pay_out(payment)
    [settlement] = acquirer.settlements_list(start=None, end=None).items
    assert isinstance(settlement, SettlementFound) and settlement.settlement_id and settlement.utr
    [event] = acquirer.settlement_events(settlement_id=settlement.settlement_id).items
    assert isinstance(event, SettlementEventFound)
    assert (event.kind, event.order_ref, event.amount) == ("payment", payment.sabpaisa_txn_id, payment.amount)
    assert event.tax == gst_on(event.fee)
    assert (settlement.gross, settlement.fees, settlement.tax) == (event.amount, event.fee, event.tax)
    assert settlement.net == event.amount - event.fee - event.tax
    # Stored by the fetch, linked to the payment, and nothing for the reconciliation to report.
    assert settlements_fetch(acquirer).lines_added == 1
    assert SettlementLine.objects.get().payment_id == payment.pk
    assert reconcile().total == 0


def test_decline(harness, payment):
    acquirer = harness.acquirer()
    challenge = challenged(harness, acquirer, payment)
    otp = harness.settle_card(payment, challenge, approved=False)
    answer = acquirer.card_verify_otp(payment=payment, otp=otp, challenge_ref=challenge)
    assert answer.outcome == Outcome.DECLINED and answer.message


def test_card_fields_are_opened_and_confirmed_by_the_status_query_or_refused(harness, payment):
    """An acquirer with card fields of its own (CARD_FORM_MODE=processor) opens the payment for
    them, never seeing the card, and its status query of the card step (no challenge of ours)
    says what they paid; one without refuses to open any."""
    acquirer = harness.acquirer()
    fields = acquirer.card_fields()
    if fields is None:
        with pytest.raises(AcquirerRefused):
            acquirer.card_fields_open(payment=payment, return_url="https://pay.example.com/back")
        return
    assert isinstance(fields, CardFields) and fields.script.startswith(("https://", "http://")) and fields.origins
    answer = acquirer.card_fields_open(payment=payment, return_url="https://pay.example.com/back")
    assert answer.outcome == Outcome.PENDING and answer.reference
    Payment.objects.filter(pk=payment.pk).update(payment_mode="CARD")
    payment.refresh_from_db()
    harness.pay_in_card_fields(payment, answer.reference, approved=True)
    status = acquirer.call_status(payment=payment, step="card_verify_otp")
    assert status.outcome == Outcome.APPROVED and status.reference


def test_not_final_yet(harness, payment):
    acquirer = harness.acquirer()
    vpa = acquirer.upi_vpa_check(harness.pending_vpa)
    assert acquirer.upi_pay(payment=payment, payer_vpa=vpa).outcome == Outcome.PENDING
    assert acquirer.upi_status(payment=payment, payer_vpa=vpa).outcome == Outcome.PENDING


def test_unreachable(harness, payment):
    acquirer, payment = harness.unreachable(payment)
    with pytest.raises(AcquirerUnavailable):
        acquirer.upi_register(payment=payment)


def test_refund_is_idempotent_on_its_id(harness, payment):
    acquirer = harness.acquirer()
    approved(harness, acquirer, payment)
    first = acquirer.refund(payment=payment, amount=10000, refund_id="rf_contract_0001")
    again = acquirer.refund(payment=payment, amount=10000, refund_id="rf_contract_0001")
    assert first.outcome in (Outcome.APPROVED, Outcome.PENDING)
    assert (again.outcome, again.reference) == (first.outcome, first.reference)
    assert acquirer.refund_ref("rf_contract_0001")


def test_reverse_is_idempotent_on_its_id(harness, payment):
    acquirer = harness.acquirer()
    approval = approved(harness, acquirer, payment)
    first = acquirer.reverse(payment=payment, bank_rrn=approval.reference, amount=payment.amount, reversal_id="rev_1")
    again = acquirer.reverse(payment=payment, bank_rrn=approval.reference, amount=payment.amount, reversal_id="rev_1")
    assert first.outcome in (Outcome.APPROVED, Outcome.PENDING)
    assert (again.outcome, again.reference) == (first.outcome, first.reference)


def test_a_notice_carries_the_answer_its_status_query_gives(harness, payment):
    acquirer = harness.acquirer()
    answer = approved(harness, acquirer, payment)
    headers, body = harness.delivery(payment, answer)
    delivery = acquirer.notice_verify(headers=headers, raw_body=body)
    assert isinstance(delivery, NoticeDelivery)
    notice = acquirer.notice_parse(delivery.payload)
    assert isinstance(notice, PaymentNotice)
    assert (notice.order_ref, notice.amount) == (payment.sabpaisa_txn_id, payment.amount)
    assert (notice.answer.outcome, notice.answer.reference) == (Outcome.APPROVED, answer.reference)
    with pytest.raises(NoticeRejected):
        acquirer.notice_verify(headers=headers, raw_body=body + b" ")


@pytest.mark.parametrize("paise", [0, 1, 99, 100, 1050, 12_345, 100_000_000])
def test_money_round_trip(harness, paise):
    acquirer = harness.acquirer()
    assert acquirer.amount_from_acquirer(acquirer.amount_to_acquirer(paise)) == paise


def test_money_refuses_what_it_cannot_convert_exactly(harness):
    acquirer = harness.acquirer()
    for bad in (-1, 1.5):
        with pytest.raises((TypeError, ValueError)):
            acquirer.amount_to_acquirer(bad)


def test_nothing_reads_an_acquirer_with_getattr():
    """The protocol declares everything it is asked for (payments.acquirer.base.Acquirer)."""
    reads = re.compile(r"getattr\(\s*(get_acquirer\(\)|acquirer\b|\w+\.acquirer\b)")
    found = [f"{path.relative_to(ROOT)}:{number}"
             for package in ("gateway", "payments", "refunds", "tokens", "webhooks")
             for path in sorted((ROOT / package).rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1) if reads.search(line)]
    assert not found, found
