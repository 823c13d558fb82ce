"""Finance's settlement pages: the list (period, UTR, gross, fees, GST, net, bank credit
matched or not), a settlement's page with its lines and each payment's story a click away and
the reasons it is short, the merchant's CSV (audited, finance only), the exceptions queue with
each kind's reason in words, resolving with a note (audited), and the bank statement upload;
every page a fixed number of queries however many rows."""
from __future__ import annotations

import csv
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from gateway.platform.models import AuditRecord
from refunds.models import BankStatement, ReconException, Settlement
from tests.console.conftest import ROLES
from tests.console.settlement_data import books, settlement_of
from tests.support.factories import make_merchant, make_payment

pytestmark = pytest.mark.django_db

LIST = "/admin/console/settlements/"
QUEUE = "/admin/console/reconciliation/exceptions/"
UPLOAD = "/admin/console/reconciliation/statements/upload/"


def page_of(settlement) -> str:
    return f"/admin/console/settlements/{settlement.pk}/"


def exception_page(exception) -> str:
    return f"/admin/console/reconciliation/exceptions/{exception.pk}/"


@pytest.fixture
def world(shop):
    return books(shop)


def html(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


@pytest.mark.parametrize("role", ROLES)
def test_every_role_reads_the_settlements_and_the_queue(as_role, world, role):
    client = as_role(role)
    for url in (LIST, page_of(world.short), QUEUE, exception_page(world.fee_exception)):
        assert client.get(url).status_code == 200, url
    assert client.get("/admin/console/settlements/999999/").status_code == 404
    assert client.get("/admin/console/reconciliation/exceptions/999999/").status_code == 404


def test_staff_in_no_group_are_refused_with_the_permission_named(as_role, world):
    response = as_role(None).get(LIST)
    assert response.status_code == 403
    assert "refunds.view_settlement" in response.content.decode()


def test_the_list_shows_each_settlements_figures_and_whether_the_bank_matched_it(as_role, world):
    page = html(as_role("finance").get(LIST))
    for settlement in (world.clean, world.short):
        assert f'data-settlement="{settlement.public_id}"' in page
        assert settlement.utr in page
    # The short one's net: 50,000 − 400 fees − 72 GST − 2,000 refunded − 300 debited, and 500 short.
    assert world.short.net == 46_728 and "₹467.28 (46728 paise)" in page
    assert page.count("not matched") >= 2 and "does not add up" in page


def test_the_short_filter_keeps_only_settlements_short_or_in_doubt(as_role, world):
    Settlement.objects.filter(pk=world.clean.pk).update(bank_line=_bank_credit(world.clean))
    page = html(as_role("finance").get(LIST, {"short": "on"}))
    assert world.short.public_id in page and world.clean.public_id not in page
    assert world.clean.public_id in html(as_role("finance").get(LIST, {"bank": "matched"}))
    assert world.short.public_id not in html(as_role("finance").get(LIST, {"bank": "matched"}))


def test_an_open_exception_alone_makes_a_settlement_in_doubt_until_it_is_resolved(as_role, world):
    # The clean settlement adds up and its bank credit matched: only an open exception about it
    # puts it on the short list, and resolving that exception takes it off.
    Settlement.objects.filter(pk=world.clean.pk).update(bank_line=_bank_credit(world.clean))
    exception = ReconException.objects.create(kind="bank_unmatched", subject=f"settlement:{world.clean.pk}",
                                              merchant=world.clean.merchant, settlement=world.clean)
    assert world.clean.public_id in html(as_role("finance").get(LIST, {"short": "on"}))
    ReconException.objects.filter(pk=exception.pk).update(status=ReconException.Status.RESOLVED,
                                                          resolved_at=timezone.now())
    assert world.clean.public_id not in html(as_role("finance").get(LIST, {"short": "on"}))


def test_a_bad_filter_says_which_field_instead_of_failing(as_role, world):
    page = html(as_role("finance").get(LIST, {"paid_from": "2026-11-21", "paid_to": "2026-11-01"}))
    assert "Paid to: must not be before Paid from." in page
    assert "Enter a valid date" in html(as_role("finance").get(LIST, {"paid_from": "yesterday"}))


def _bank_credit(settlement):
    from refunds.models import BankStatementLine

    statement = BankStatement.objects.create(name="hdfc.csv", sha256=f"{settlement.pk:064d}", source="console")
    return BankStatementLine.objects.create(statement=statement, line_no=1, date=settlement.settled_at.date(),
                                            amount=settlement.net, utr=settlement.utr)


def test_a_settlements_page_says_why_it_is_short_and_links_each_payments_story(as_role, world):
    page = html(as_role("support").get(page_of(world.short)))
    assert "does not add up" in page and "(−₹5.00 (−500 paise) difference)" in page
    assert f"No bank credit of ₹{world.short.net / 100:,.2f}".replace(",", "") in page.replace(",", "")
    assert "The fee differs from the merchant&#x27;s agreed rate: expected ₹1.50 (150 paise), found ₹2.00 (200 paise)." \
        in page
    assert "A settlement line names a payment or refund we don&#x27;t know." in page
    assert "Refunds of ₹20.00 (2000 paise) were deducted." in page
    for payment in world.paid[1:]:
        assert f'href="/admin/payments/payment/{payment.pk}/change/" data-testid="story-link"' in page
    assert f'href="/admin/refunds/refund/{world.refund.pk}/change/"' in page
    assert "not ours: =HYPERLINK(evil)" in page
    # The page of the story link is the payment's page with its story.
    story = html(as_role("support").get(f"/admin/payments/payment/{world.paid[1].pk}/change/"))
    assert 'data-testid="story"' in story


def test_a_clean_settlement_says_nothing_is_wrong(as_role, world):
    Settlement.objects.filter(pk=world.clean.pk).update(bank_line=_bank_credit(world.clean))
    page = html(as_role("finance").get(page_of(world.clean)))
    assert "Nothing is wrong with this settlement." in page and "adds up" in page and "matched" in page


def _csv(response) -> list[dict]:
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_the_merchants_csv_adds_up_line_by_line_with_its_gst_figures_and_is_audited(as_role, world):
    response = as_role("finance").post(page_of(world.short) + "csv/")
    assert response["Content-Disposition"] == (
        f'attachment; filename="settlement-SHOP-{world.short.public_id}-2026-11-21.csv"')
    rows = _csv(response)
    details = [row for row in rows if row["record_type"] in ("payment", "refund", "chargeback", "adjustment")]
    by_type = {row["record_type"]: row for row in rows}
    assert len(details) == 5  # two payments, a refund, an adjustment, the unknown line
    assert sum(int(row["net_paise"]) for row in details) == int(by_type["lines_net"]["net_paise"])
    assert by_type["total_payment"]["count"] == "3"
    assert by_type["total_refund"]["amount_paise"] == "-2000"
    assert by_type["total_adjustment"]["amount_paise"] == "-300"
    assert by_type["settlement_net"]["net_paise"] == str(world.short.net)
    # The unknown line (700 paise) and the 500 short: what the merchant was paid differs from its lines.
    assert int(by_type["difference"]["net_paise"]) == world.short.net - int(by_type["lines_net"]["net_paise"])
    invoice = by_type["fee_invoice"]
    assert (invoice["fee_paise"], invoice["gst_paise"], invoice["net_paise"]) == ("400", "72", "472")
    assert invoice["gst_rupees"] == "0.72" and "18%" in invoice["note"]
    unknown = next(row for row in details if row["event_id"] == "SHORT1-x")
    assert unknown["sabpaisa_txn_id"] == "'=HYPERLINK(evil)"  # never run as a formula
    assert {row["utr"] for row in rows} == {world.short.utr}
    record = AuditRecord.objects.get(action="settlement.export_csv")
    assert record.object_id == str(world.short.pk) and record.after["net_paise"] == world.short.net


@pytest.mark.parametrize("role", ["support", "administrators"])
def test_only_finance_downloads_the_merchants_csv(as_role, world, role):
    assert as_role(role).post(page_of(world.short) + "csv/").status_code == 403
    assert as_role("finance").get(page_of(world.short) + "csv/").status_code == 405
    assert not AuditRecord.objects.filter(action="settlement.export_csv").exists()


def test_the_csv_is_read_in_chunks_without_a_server_side_cursor(as_role, shop, monkeypatch):
    from gateway.console import settlements

    monkeypatch.setattr(settlements, "EXPORT_CHUNK", 2)
    settlement = settlement_of(shop, "CHUNKED", payments=[make_payment(shop, amount=1_000 + n) for n in range(5)])
    with CaptureQueriesContext(connection) as captured:
        rows = _csv(as_role("finance").post(page_of(settlement) + "csv/"))
    assert [int(row["amount_paise"]) for row in rows if row["record_type"] == "payment"] == [1_000 + n for n in range(5)]
    assert not any("DECLARE" in query["sql"].upper() for query in captured.captured_queries)


def test_the_queue_gives_each_kind_its_reason_in_words_and_filters(as_role, world):
    page = html(as_role("support").get(QUEUE))
    assert "The fee differs from the merchant&#x27;s agreed rate" in page
    assert "A settlement line names a payment or refund we don&#x27;t know" in page
    assert f'href="/admin/payments/payment/{world.paid[1].pk}/change/"' in page
    only_fees = html(as_role("support").get(QUEUE, {"kind": "fee_mismatch"}))
    assert f'data-exception="{world.fee_exception.pk}"' in only_fees
    assert f'data-exception="{world.unknown_exception.pk}"' not in only_fees
    assert "Select a valid choice" in html(as_role("support").get(QUEUE, {"kind": "nonsense"}))


def test_finance_resolves_an_exception_with_a_note_and_it_is_audited(as_role, world):
    client = as_role("finance")
    url = exception_page(world.fee_exception)
    page = html(client.get(url))
    assert "Compare the fee with the merchant" in page and 'data-testid="resolve"' in page
    response = client.post(url, {"note": "Acquirer agreed to credit 50 paise next cycle."}, follow=True)
    assert "Resolved: The fee differs" in response.content.decode()
    exception = ReconException.objects.get(pk=world.fee_exception.pk)
    assert exception.status == "resolved" and exception.resolution_note.startswith("Acquirer agreed")
    record = AuditRecord.objects.get(action="recon_exception.resolve")
    assert record.after["note"] == "Acquirer agreed to credit 50 paise next cycle."
    # Resolved once: the page shows the note; a second resolution is refused and changes nothing.
    assert "Acquirer agreed to credit" in html(client.get(url))
    again = client.post(url, {"note": "again"}, follow=True).content.decode()
    assert "Not resolved" in again
    assert ReconException.objects.get(pk=world.fee_exception.pk).resolution_note.startswith("Acquirer agreed")
    assert f'data-exception="{world.fee_exception.pk}"' not in html(client.get(QUEUE))
    assert f'data-exception="{world.fee_exception.pk}"' in html(client.get(QUEUE, {"status": "resolved"}))


def test_resolving_without_a_note_is_refused_and_leaves_it_open(as_role, world):
    response = as_role("finance").post(exception_page(world.fee_exception), {"note": "  "}, follow=True)
    assert "Not resolved" in response.content.decode()
    assert ReconException.objects.get(pk=world.fee_exception.pk).status == "open"


@pytest.mark.parametrize("role", ["support", "administrators"])
def test_only_finance_resolves(as_role, world, role):
    client = as_role(role)
    assert 'data-testid="resolve"' not in html(client.get(exception_page(world.fee_exception)))
    assert client.post(exception_page(world.fee_exception), {"note": "x"}).status_code == 403
    assert ReconException.objects.get(pk=world.fee_exception.pk).status == "open"


# The short settlement's payout (₹467.28) as the bank printed it; nothing for the clean one.
STATEMENT = b"Date,Narration,UTR,Amount\n21/11/2026,NEFT CASHFREE PAYMENTS,UTRSHORT1,467.28\n"


@pytest.mark.django_db(transaction=True)
def test_finance_uploads_a_bank_statement_once_it_is_reconciled_and_audited(as_role, world):
    client = as_role("finance")
    assert 'data-testid="upload"' in html(client.get(UPLOAD))
    response = client.post(UPLOAD, {"statement": SimpleUploadedFile("hdfc-nov.csv", STATEMENT, "text/csv")},
                           follow=True)
    message = response.content.decode()
    assert "Read 1 lines of hdfc-nov.csv. Reconciled: 1 settlement matched to a bank credit" in message
    statement = BankStatement.objects.get()
    line = statement.lines.get()
    assert (line.amount, line.utr, statement.uploaded_by.username) == (46_728, "UTRSHORT1",
                                                                        response.wsgi_request.user.username)
    assert Settlement.objects.get(pk=world.short.pk).bank_line_id == line.pk
    # The clean settlement's payout is not on the statement, which runs past its day.
    unmatched = ReconException.objects.get(kind="bank_unmatched")
    assert unmatched.settlement_id == world.clean.pk
    assert "The settlement&#x27;s UTR and net amount are not on the bank statement" in message
    assert AuditRecord.objects.get(action="bank_statement.upload").after["lines"] == 1
    again = client.post(UPLOAD, {"statement": SimpleUploadedFile("copy.csv", STATEMENT, "text/csv")}, follow=True)
    assert "uploaded before" in again.content.decode() and BankStatement.objects.count() == 1
    assert ReconException.objects.filter(kind="bank_unmatched").count() == 1


def test_a_statement_the_gateway_cannot_read_is_refused_naming_the_row_and_column(as_role, world):
    bad = b"date,amount,utr\n2026-11-21,12.345,UTR1\n"
    page = html(as_role("finance").post(UPLOAD, {"statement": SimpleUploadedFile("bad.csv", bad, "text/csv")}))
    assert "Bank statement: row 2, column amount" in page
    assert not BankStatement.objects.exists() and not AuditRecord.objects.filter(action="bank_statement.upload")


@pytest.mark.parametrize("role", ["support", "administrators"])
def test_only_finance_uploads_statements(as_role, world, role):
    client = as_role(role)
    assert client.get(UPLOAD).status_code == 403
    assert client.post(UPLOAD, {"statement": SimpleUploadedFile("s.csv", STATEMENT, "text/csv")}).status_code == 403
    assert not BankStatement.objects.exists()
    assert 'data-testid="upload-link"' not in html(client.get(QUEUE))


def test_why_a_settlement_is_short_is_three_clicks_from_the_dashboard(as_role, world):
    client = as_role("finance")
    dashboard = html(client.get("/admin/console/dashboard/"))
    # Click 1: the dashboard's link to the settlements short or in doubt.
    assert f'href="{LIST}?short=on" data-testid="short-settlements"' in dashboard
    assert "2 open exceptions" in dashboard
    # Click 2: the short settlement, listed there.
    listed = html(client.get(LIST, {"short": "on"}))
    assert f'href="{page_of(world.short)}"' in listed
    # Click 3: its page says why, and each exception opens on its evidence.
    page = html(client.get(page_of(world.short)))
    assert 'data-testid="reasons"' in page and f'href="{exception_page(world.fee_exception)}"' in page


# --- bounded queries ----------------------------------------------------------------------------

def queries_for(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200, url
    return len(captured)


def test_every_page_costs_the_same_few_queries_for_few_rows_and_for_many(as_role, shop):
    client = as_role("finance")
    other = make_merchant(code="OTHERSHOP")
    few = settlement_of(shop, "FEW", payments=[make_payment(shop) for _ in range(2)])
    many = settlement_of(shop, "MANY", payments=[make_payment(shop) for _ in range(30)])
    for n, line in enumerate(many.lines.all()[:3]):
        ReconException.objects.create(kind="fee_mismatch", subject=f"line:{line.pk}", merchant=shop.merchant,
                                      settlement=many, line=line, payment=line.payment, expected=1, actual=2)
    client.get(LIST)  # the session and content types are cached from here on
    counted = {url: queries_for(client, url) for url in (LIST, page_of(few), page_of(many), QUEUE)}
    assert queries_for(client, page_of(few)) == queries_for(client, page_of(many))
    for n in range(20):
        settlement_of(other, f"MORE{n}", payments=[make_payment(other)])
        exception_line = Settlement.objects.get(processor_settlement_id=f"MORE{n}").lines.get()
        ReconException.objects.create(kind="tax_not_gst", subject=f"line:{exception_line.pk}",
                                      merchant=other.merchant, line=exception_line, payment=exception_line.payment)
    assert queries_for(client, LIST) == counted[LIST]
    assert queries_for(client, QUEUE) == counted[QUEUE]
    assert max(counted.values()) <= 12, counted
