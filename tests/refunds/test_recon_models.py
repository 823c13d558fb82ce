"""The reconciliation's data: exceptions (one per fault, resolved once with a note, audited),
the per-merchant fee table, and the bank statement file finance uploads."""
from __future__ import annotations

from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from hypothesis import given
from hypothesis import strategies as st

from gateway.core.errors import ValidationError
from gateway.platform.models import AuditRecord
from refunds.models import BankStatementLine, MerchantFeeRate, ReconException
from refunds.settlements.arithmetic import agreed_fee, gst_on
from refunds.settlements.exceptions import InvalidReconExceptionTransition, recon_exception_resolve
from refunds.settlements.statements import (
    StatementInvalid,
    bank_statement_store,
    parse_rupees,
    parse_statement,
)
from tests.support.factories import make_merchant

pytestmark = pytest.mark.django_db


def test_every_kind_has_its_reason_in_words():
    assert len(ReconException.Kind.choices) >= 8
    for value, label in ReconException.Kind.choices:
        assert label != value and " " in label


def test_the_same_fault_is_recorded_once():
    ReconException.objects.create(kind="not_settled", subject="payment:1")
    with pytest.raises(IntegrityError), transaction.atomic():
        ReconException.objects.create(kind="not_settled", subject="payment:1")
    ReconException.objects.create(kind="settled_twice", subject="payment:1")


def test_resolving_needs_a_note_records_who_and_audits():
    merchant = make_merchant().merchant
    user = get_user_model().objects.create_user("finance", password="x")
    fault = ReconException.objects.create(kind="bank_unmatched", subject="settlement:9", merchant=merchant)
    with pytest.raises(ValidationError) as err:
        recon_exception_resolve(exception_id=fault.pk, actor=user, note="  ")
    assert err.value.field == "note"
    assert ReconException.objects.get(pk=fault.pk).status == "open"
    resolved = recon_exception_resolve(exception_id=fault.pk, actor=user, note="bank credited late, seen 29/11")
    assert (resolved.status, resolved.resolved_by, resolved.resolution_note) == (
        "resolved", user, "bank credited late, seen 29/11")
    assert resolved.resolved_at is not None
    audit = AuditRecord.objects.get(action="recon_exception.resolve")
    assert (audit.object_id, audit.merchant, audit.actor) == (str(fault.pk), merchant, user)
    with pytest.raises(InvalidReconExceptionTransition):
        recon_exception_resolve(exception_id=fault.pk, actor=user, note="again")
    assert AuditRecord.objects.filter(action="recon_exception.resolve").count() == 1


def test_a_merchant_has_one_rate_per_method():
    merchant = make_merchant().merchant
    MerchantFeeRate.objects.create(merchant=merchant, method="CARD", percent_bp=190)
    MerchantFeeRate.objects.create(merchant=merchant, method="", percent_bp=100, fixed=300)
    with pytest.raises(IntegrityError), transaction.atomic():
        MerchantFeeRate.objects.create(merchant=merchant, method="CARD", percent_bp=200)


def test_fee_and_gst_round_half_up_to_the_paisa():
    # 1.90 % of ₹123.45 is 234.555 paise: 235. GST on 235 is 42.3: 42; on 25, 4.5: 5.
    assert agreed_fee(12_345, percent_bp=190, fixed=0) == 235
    assert agreed_fee(10_000, percent_bp=0, fixed=300) == 300
    assert gst_on(235) == 42
    assert gst_on(25) == 5
    assert gst_on(0) == 0


@given(st.integers(0, 10**13), st.integers(0, 10_000), st.integers(0, 10**6))
def test_the_agreed_fee_is_the_exact_rate_rounded_half_up(amount, bp, fixed):
    from decimal import ROUND_HALF_UP, Decimal
    exact = Decimal(amount) * bp / 10_000
    assert agreed_fee(amount, percent_bp=bp, fixed=fixed) == int(exact.quantize(Decimal(1), ROUND_HALF_UP)) + fixed
    fee = agreed_fee(amount, percent_bp=bp, fixed=fixed)
    assert gst_on(fee) == int((Decimal(fee) * 18 / 100).quantize(Decimal(1), ROUND_HALF_UP))


STATEMENT = (
    "\ufeffDate,Narration,Amount,UTR,Balance\n"
    "2026-11-27,NEFT CASHFREE SETTLEMENT,\"1,23,456.50\",N331260001,9\n"
    "\n"
    "28/11/2026,charges,-12.5, N331260002 ,9\n"
).encode()


def test_a_statement_reads_both_date_forms_and_rupees_exactly():
    rows = parse_statement(STATEMENT)
    assert [(r.line_no, r.date, r.amount, r.utr, r.narration) for r in rows] == [
        (1, date(2026, 11, 27), 12_345_650, "N331260001", "NEFT CASHFREE SETTLEMENT"),
        (3, date(2026, 11, 28), -1_250, "N331260002", "charges")]


@pytest.mark.parametrize("text", ["12.345", "1e3", "₹10", "", "12,34.5", "abc", "10.-"])
def test_an_amount_that_is_not_rupees_to_the_paisa_is_refused(text):
    with pytest.raises(ValueError):
        parse_rupees(text)


@pytest.mark.parametrize("content,where", [
    (b"date,amount\n2026-11-27,10\n", "row 1"),
    (b"date,amount,utr\n2026-13-27,10,U\n", "row 2, column date"),
    (b"date,amount,utr\n2026-11-27,10.001,U\n", "row 2, column amount"),
    (b"", "empty"),
    (b"\xff\xfe", "UTF-8"),
])
def test_a_bad_statement_names_the_row_and_column(content, where):
    with pytest.raises(StatementInvalid) as err:
        parse_statement(content)
    assert where in str(err.value)


def test_a_statement_is_stored_once_and_a_bad_one_not_at_all():
    statement, created = bank_statement_store(name="nov.csv", content=STATEMENT, source="console")
    again, created_again = bank_statement_store(name="copy.csv", content=STATEMENT, source="folder")
    assert (created, created_again, again.pk) == (True, False, statement.pk)
    assert BankStatementLine.objects.filter(statement=statement).count() == 2
    with pytest.raises(StatementInvalid):
        bank_statement_store(name="bad.csv", content=b"date,amount,utr\nx,1,U\n", source="console")
    assert BankStatementLine.objects.count() == 2
