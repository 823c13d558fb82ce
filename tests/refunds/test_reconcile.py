"""The reconciliation's rules one by one, beside the generated month
(test_reconcile_month.py): the SQL's fee and GST are arithmetic.agreed_fee and gst_on to the
paisa, a settlement is judged against the bank only once a statement reaches its date, a
resolved exception stays resolved, and `manage.py reconcile --statements DIR` reads a folder."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.settlement_month import month_generate
from refunds.models import BankStatement, BankStatementLine, ReconException, Settlement
from refunds.settlements.arithmetic import agreed_fee, gst_on
from refunds.settlements.exceptions import recon_exception_resolve
from refunds.settlements.reconcile import reconcile


@pytest.mark.django_db
@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 10**12), st.integers(0, 10_000), st.integers(0, 10**5)),
                min_size=1, max_size=50))
def test_the_sql_rounds_fees_and_gst_as_the_arithmetic_does(cases):
    values = ", ".join(["(%s::bigint, %s::bigint, %s::bigint)"] * len(cases))
    with connection.cursor() as cursor:
        cursor.execute(f"""SELECT fee, (fee * 18 + 50) / 100 FROM (
                             SELECT (a * bp + 5000) / 10000 + fixed AS fee, n
                             FROM (SELECT a, bp, fixed, row_number() OVER () AS n FROM (VALUES {values}) v(a, bp, fixed)) x
                           ) y ORDER BY n""", [v for case in cases for v in case])
        rows = cursor.fetchall()
    assert rows == [(agreed_fee(a, percent_bp=bp, fixed=fixed), gst_on(agreed_fee(a, percent_bp=bp, fixed=fixed)))
                    for a, bp, fixed in cases]


@pytest.mark.django_db(transaction=True)
def test_the_bank_is_asked_only_once_a_statement_reaches_the_payout_date():
    month = month_generate(payments=300, merchants=1, days=3, chargebacks=0)
    # The statement stops before the last payout: that one is not yet missing from the bank.
    last = Settlement.objects.order_by("-settled_at").first()
    BankStatementLine.objects.filter(utr=last.utr).delete()
    result = reconcile(as_of=month.end + timedelta(days=5))
    assert result.total == 0 and result.bank_matched == 2
    # A statement running past it, without it: now it is.
    other = BankStatement.objects.create(name="later", sha256="later", source="folder")
    BankStatementLine.objects.create(statement=other, line_no=1, date=month.end.date() + timedelta(days=1),
                                     amount=5, utr="SOMETHINGELSE")
    assert reconcile(as_of=month.end + timedelta(days=5)).found["bank_unmatched"] == 1
    fault = ReconException.objects.get(kind="bank_unmatched")
    assert (fault.settlement, fault.expected, fault.evidence["utr"]) == (last, last.net, last.utr)


@pytest.mark.django_db(transaction=True)
def test_a_resolved_exception_is_not_opened_again():
    month = month_generate(payments=200, merchants=1, days=2, chargebacks=0, faults={"tax_not_gst": 1})
    reconcile(as_of=month.end + timedelta(days=5))
    fault = ReconException.objects.get()
    user = get_user_model().objects.create_user("fin", password="x")
    recon_exception_resolve(exception_id=fault.pk, actor=user, note="acquirer credited the paisa in November")
    assert reconcile(as_of=month.end + timedelta(days=5)).total == 0
    assert ReconException.objects.get().status == "resolved"


@pytest.mark.django_db(transaction=True)
def test_the_command_reads_a_folder_of_statements(tmp_path, capsys):
    month = month_generate(payments=200, merchants=1, days=2, chargebacks=0)
    BankStatement.objects.all().delete()
    rows = ["Date,Amount,UTR,Narration"] + [
        f"{(s.settled_at + timedelta(hours=5, minutes=30)).strftime('%d/%m/%Y')},"
        f"\"{s.net // 100:,}.{s.net % 100:02d}\",{s.utr},NEFT CR"
        for s in Settlement.objects.order_by("id")]
    (tmp_path / "nov.csv").write_text("\n".join(rows) + "\n")
    call_command("reconcile", "--statements", str(tmp_path))
    out = capsys.readouterr().out
    assert "nov.csv: stored, 2 rows" in out and "matched to a bank credit: 2" in out and "new exceptions: 0" in out
    assert Settlement.objects.filter(bank_line__isnull=True).count() == 0
    call_command("reconcile", "--statements", str(tmp_path))
    assert "nov.csv: already stored" in capsys.readouterr().out
    del month
