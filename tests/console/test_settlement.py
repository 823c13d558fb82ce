"""The settlement export: per merchant and IST calendar day, successful payments (by
completed_at) and processed refunds (by processed_at), with totals that match the rows listed;
from the console for finance and from `manage.py settlement_export`; audited either way."""
from __future__ import annotations

import csv
import io
import json
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from gateway.platform.models import AuditRecord
from payments.models import Payment
from refunds.models import Refund
from tests.support.factories import make_merchant, make_payment, make_refund

pytestmark = pytest.mark.django_db

IST = ZoneInfo("Asia/Kolkata")
DAY = date(2025, 3, 14)
URL = "/admin/console/settlement-export/"


def at(day: date, hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute, second), tzinfo=IST)


def paid(merchant, amount: int, completed_at: datetime, **fields) -> Payment:
    payment = make_payment(merchant, amount=amount, **fields)
    Payment.objects.filter(pk=payment.pk).update(completed_at=completed_at)
    return Payment.objects.get(pk=payment.pk)


def refunded(payment: Payment, amount: int, status: str, processed_at: datetime | None) -> Refund:
    fields = {"bank_refund_reference": f"RF{payment.pk}{amount}"} if status == "SUCCESS" else {}
    return make_refund(payment, amount=amount, status=status,
                       processed_at=processed_at, **fields)


@pytest.fixture
def ledger(shop):
    """SHOP's money around 14 March 2025 (IST), with the edges of the day on both sides."""
    other = make_merchant(code="NEIGHBOUR")
    rows = {
        "first second": paid(shop, 10_000, at(DAY, 0)),
        "last second": paid(shop, 25_050, at(DAY, 23, 59, 59)),
        "midday": paid(shop, 99_999, at(DAY, 12, 30)),
        "day before": paid(shop, 70_000, at(DAY - timedelta(days=1), 23, 59, 59)),
        "day after": paid(shop, 80_000, at(DAY + timedelta(days=1), 0)),
        # 18:31 UTC on the 13th is 00:01 IST on the 14th: the Indian day decides, not UTC's.
        "utc evening before": paid(shop, 5_000, datetime(2025, 3, 13, 18, 31, tzinfo=ZoneInfo("UTC"))),
        "other merchant": paid(other, 33_000, at(DAY, 10)),
    }
    failed = make_payment(shop, status="FAILED")
    Payment.objects.filter(pk=failed.pk).update(completed_at=at(DAY, 9))
    refunds = {
        # Refunds count on the day the bank processed them, whatever the payment's day.
        "of an older payment": refunded(rows["day before"], 20_000, "SUCCESS", at(DAY, 11)),
        "same day": refunded(rows["midday"], 9_999, "SUCCESS", at(DAY, 15)),
        "processed next day": refunded(rows["midday"], 1_000, "SUCCESS", at(DAY + timedelta(days=1), 1)),
        "pending": refunded(rows["first second"], 500, "INITIATED", None),
        "failed": refunded(rows["first second"], 700, "FAILED", None),
    }
    return rows, refunds


def parse(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def check_totals(records: list[dict]) -> dict:
    """Every total matches the rows it sums, in paise and in rupees; returns the totals."""
    detail = [r for r in records if r["record_type"] in ("payment", "refund")]
    totals = {r["record_type"]: r for r in records if r["record_type"] not in ("payment", "refund")}
    assert list(totals) == ["total_payments", "total_refunds", "net"]
    payments = [int(r["amount_paise"]) for r in detail if r["record_type"] == "payment"]
    refunds = [int(r["amount_paise"]) for r in detail if r["record_type"] == "refund"]
    assert all(amount > 0 for amount in payments) and all(amount < 0 for amount in refunds)
    assert int(totals["total_payments"]["amount_paise"]) == sum(payments)
    assert int(totals["total_payments"]["count"]) == len(payments)
    assert int(totals["total_refunds"]["amount_paise"]) == sum(refunds)
    assert int(totals["total_refunds"]["count"]) == len(refunds)
    assert int(totals["net"]["amount_paise"]) == sum(payments) + sum(refunds)
    for record in records:
        paise = int(record["amount_paise"])
        assert record["amount_rupees"] == f"{'-' if paise < 0 else ''}{abs(paise) // 100}.{abs(paise) % 100:02d}"
    return {name: int(row["amount_paise"]) for name, row in totals.items()}


def test_the_export_lists_the_days_money_and_its_totals_match(as_role, ledger, shop):
    rows, refunds = ledger
    response = as_role("finance").post(URL, {"merchant": "SHOP", "date": DAY.isoformat()})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == 'attachment; filename="settlement-SHOP-2025-03-14.csv"'
    records = parse(b"".join(response.streaming_content).decode())
    listed = {r["sabpaisa_txn_id"] for r in records if r["record_type"] == "payment"}
    assert listed == {rows[name].sabpaisa_txn_id for name in ("first second", "last second", "midday",
                                                               "utc evening before")}
    listed_refunds = {r["refund_id"] for r in records if r["record_type"] == "refund"}
    assert listed_refunds == {refunds["of an older payment"].refund_id, refunds["same day"].refund_id}
    totals = check_totals(records)
    assert totals == {"total_payments": 10_000 + 25_050 + 99_999 + 5_000, "total_refunds": -(20_000 + 9_999),
                      "net": 140_049 - 29_999}
    first = next(r for r in records if r["sabpaisa_txn_id"] == rows["first second"].sabpaisa_txn_id)
    assert first["timestamp_ist"] == "2025-03-14T00:00:00+05:30" and first["date"] == "2025-03-14"
    assert first["merchant_id"] == "SHOP" and first["amount_rupees"] == "100.00"


def test_the_export_is_audited(as_role, ledger):
    as_role("finance").post(URL, {"merchant": "SHOP", "date": DAY.isoformat()})
    record = AuditRecord.objects.get(action="settlement.export")
    assert record.actor_name.startswith("finance") and record.merchant.code == "SHOP"
    assert record.after == {"date": "2025-03-14", "payments": 4, "payments_paise": 140_049, "refunds": 2,
                            "refunds_paise": 29_999, "net_paise": 110_050}


def test_the_export_page_previews_the_totals_before_the_download(as_role, ledger):
    page = as_role("finance").get(URL, {"merchant": "SHOP", "date": DAY.isoformat()})
    html = page.content.decode()
    assert "₹1,400.49 (140049 paise)" in html and "₹299.99 (29999 paise)" in html
    assert "₹1,100.50 (110050 paise)" in html and "Download CSV" in html
    assert not AuditRecord.objects.filter(action="settlement.export").exists()  # a preview is a read


def test_a_day_that_has_not_begun_is_refused(as_role, shop):
    tomorrow = timezone.localdate() + timedelta(days=1)
    response = as_role("finance").post(URL, {"merchant": "SHOP", "date": tomorrow.isoformat()})
    assert response.status_code == 200 and "has not begun yet" in response.content.decode()


def test_the_command_writes_the_same_file(as_role, ledger, tmp_path, capsys):
    response = as_role("finance").post(URL, {"merchant": "SHOP", "date": DAY.isoformat()})
    from_console = b"".join(response.streaming_content).decode()
    output = tmp_path / "settlement.csv"
    call_command("settlement_export", "--merchant", "SHOP", "--date", "2025-03-14", "--output", str(output))
    assert output.read_bytes().decode("utf-8") == from_console
    summary = json.loads(capsys.readouterr().out)
    assert summary["net_paise"] == 110_050 and summary["payments"] == 4
    record = AuditRecord.objects.filter(action="settlement.export").latest("id")
    assert record.actor_name.startswith("cli:") and record.after["output"] == str(output)


def test_the_command_writes_to_stdout_without_output(ledger):
    out = io.StringIO()
    call_command("settlement_export", "--merchant", "SHOP", "--date", "2025-03-14", stdout=out)
    assert check_totals(parse(out.getvalue()))["net"] == 110_050


@pytest.mark.parametrize("args, message", [
    (["--merchant", "NOPE", "--date", "2025-03-14"], "no merchant"),
    (["--merchant", "SHOP", "--date", "14/03/2025"], "YYYY-MM-DD"),
    (["--merchant", "SHOP", "--date", "2999-01-01"], "has not begun"),
])
def test_the_command_refuses_bad_arguments(shop, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("settlement_export", *args)


def test_a_day_without_money_has_zero_totals(shop):
    out = io.StringIO()
    call_command("settlement_export", "--merchant", "SHOP", "--date", "2025-01-01", stdout=out)
    assert check_totals(parse(out.getvalue())) == {"total_payments": 0, "total_refunds": 0, "net": 0}


def test_text_a_merchant_chose_cannot_become_a_spreadsheet_formula(shop):
    payment = paid(shop, 10_000, at(DAY, 8))
    Payment.objects.filter(pk=payment.pk).update(merchant_txn_id='=HYPERLINK("http://evil.example","x")')
    out = io.StringIO()
    call_command("settlement_export", "--merchant", "SHOP", "--date", "2025-03-14", stdout=out)
    (row,) = [r for r in parse(out.getvalue()) if r["record_type"] == "payment"]
    assert row["merchant_txn_id"].startswith("'=")
