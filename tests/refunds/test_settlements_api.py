"""GET /api/v2/settlements and GET /api/v2/settlements/{settlementId}: a merchant reads what the
acquirer paid it, line by line, in paise; another merchant's settlement does not exist for it;
a bad query parameter is a VALIDATION_ERROR naming it."""
from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone as dt_timezone

import pytest

from refunds import selectors
from refunds.models import Settlement, SettlementLine
from tests.support.factories import make_merchant, make_refund, make_success_payment

pytestmark = pytest.mark.django_db

UTC = dt_timezone.utc


def make_settlement(merchant, *, day: datetime | None, processor_id: str, payments=(), refunds=(),
                    fee: int = 200, tax: int = 36, adjustment: int = 0) -> Settlement:
    """A settlement of `merchant` paid at `day` (None: not paid yet), with a payment line per
    payment (fee and tax each) and a refund line per refund, its figures adding up."""
    gross = sum(p.amount for p in payments)
    refunded = sum(r.amount for r in refunds)
    fees, taxes = fee * len(payments), tax * len(payments)
    settlement = Settlement.objects.create(
        acquirer="cashfree", merchant=getattr(merchant, "merchant", merchant), processor_settlement_id=processor_id,
        utr=f"UTR{processor_id}" if day else "", period_start=day - timedelta(days=1) if day else None,
        period_end=day if day else None, gross=gross, fees=fees, tax=taxes, refunds=refunded,
        adjustments=adjustment, net=gross - fees - taxes - refunded + adjustment,
        status="SUCCESS" if day else "PENDING", settled_at=day)
    for index, payment in enumerate(payments):
        SettlementLine.objects.create(settlement=settlement, kind="payment", processor_event_id=f"{processor_id}-p{index}",
                                      amount=payment.amount, fee=fee, tax=tax, payment=payment,
                                      processor_order_id=payment.sabpaisa_txn_id)
    for index, refund in enumerate(refunds):
        SettlementLine.objects.create(settlement=settlement, kind="refund", processor_event_id=f"{processor_id}-r{index}",
                                      amount=refund.amount, payment=refund.payment, refund=refund,
                                      processor_order_id=refund.payment.sabpaisa_txn_id)
    if adjustment:
        SettlementLine.objects.create(settlement=settlement, kind="adjustment", processor_event_id=f"{processor_id}-a",
                                      amount=adjustment, event_type="FUND_SWEEP")
    return settlement


def _get(api, who, path, **params):
    return api.get(path, params, HTTP_X_API_KEY=who.api_key)


def _error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["success"] is False and body["errorCode"] == code, body
    return body


@pytest.fixture
def other(db):
    return make_merchant(code="OTHERSHOP")


def day(n: int) -> datetime:
    """Noon IST (06:30 UTC) of 2026-11-n."""
    return datetime(2026, 11, n, 6, 30, tzinfo=UTC)


def test_a_merchant_lists_its_settlements_newest_first_with_every_figure_in_paise(api, merchant):
    paid = [make_success_payment(merchant, amount=10_000), make_success_payment(merchant, amount=25_050)]
    refund = make_refund(paid[0], amount=1_000, status="SUCCESS", bank_refund_reference="ARN1")
    older = make_settlement(merchant, day=day(20), processor_id="S1", payments=paid[:1])
    newer = make_settlement(merchant, day=day(21), processor_id="S2", payments=paid[1:], refunds=[refund],
                            adjustment=-500)

    response = _get(api, merchant, "/api/v2/settlements")
    assert response.status_code == 200, response.content
    body = response.json()
    assert [s["settlementId"] for s in body["settlements"]] == [newer.public_id, older.public_id]
    assert body["items"] == body["settlements"]
    assert (body["count"], body["page"], body["size"], body["totalElements"], body["totalPages"]) == (2, 0, 20, 2, 1)
    record = body["settlements"][0]
    assert record == {
        "settlementId": newer.public_id, "merchantId": merchant.code, "utr": "UTRS2", "status": "SUCCESS",
        "periodStart": "2026-11-20T06:30:00Z", "periodEnd": "2026-11-21T06:30:00Z",
        "settledAt": "2026-11-21T06:30:00Z", "currency": "INR",
        "grossAmount": 25_050, "feeAmount": 200, "taxAmount": 36, "refundsAmount": 1_000, "chargebacksAmount": 0,
        "adjustmentsAmount": -500, "netAmount": 25_050 - 200 - 36 - 1_000 - 500,
    }
    assert _get(api, merchant, f"/api/v2/settlements/{newer.public_id}").json()["lineCount"] == 3


def test_one_merchant_never_sees_another_merchants_settlement(api, merchant, other):
    theirs = make_settlement(other, day=day(21), processor_id="THEIRS", payments=[make_success_payment(other)])
    mine = make_settlement(merchant, day=day(21), processor_id="MINE", payments=[make_success_payment(merchant)])

    listed = _get(api, merchant, "/api/v2/settlements").json()
    assert [s["settlementId"] for s in listed["settlements"]] == [mine.public_id]
    assert listed["totalElements"] == 1
    # Theirs answers exactly as one that does not exist.
    missing = _error(_get(api, merchant, f"/api/v2/settlements/{theirs.public_id}"), 404, "NOT_FOUND")
    nowhere_id = "stl_" + "Z" * 20
    nowhere = _error(_get(api, merchant, f"/api/v2/settlements/{nowhere_id}"), 404, "NOT_FOUND")
    assert missing["errorMessage"].replace(theirs.public_id, "N") == nowhere["errorMessage"].replace(nowhere_id, "N")
    # Naming the other merchant does not help: the key decides.
    _error(_get(api, merchant, "/api/v2/settlements", merchantId=other.code), 401, "UNAUTHORIZED")
    _error(_get(api, merchant, f"/api/v2/settlements/{theirs.public_id}", merchantId=other.code), 401, "UNAUTHORIZED")
    assert _get(api, other, f"/api/v2/settlements/{theirs.public_id}").status_code == 200


def test_a_settlement_not_yet_assigned_to_a_merchant_is_nobodys(api, merchant):
    unassigned = make_settlement(merchant, day=day(21), processor_id="LOOSE")
    Settlement.objects.filter(pk=unassigned.pk).update(merchant=None)
    assert _get(api, merchant, "/api/v2/settlements").json()["settlements"] == []
    _error(_get(api, merchant, f"/api/v2/settlements/{unassigned.public_id}"), 404, "NOT_FOUND")


def test_a_settlement_answers_with_its_lines_naming_our_payments_and_refunds(api, merchant):
    paid = make_success_payment(merchant, amount=50_000)
    refund = make_refund(paid, amount=5_000, status="SUCCESS", bank_refund_reference="ARN2", refund_id="R-77")
    settlement = make_settlement(merchant, day=day(22), processor_id="S3", payments=[paid], refunds=[refund],
                                 adjustment=300)
    SettlementLine.objects.create(settlement=settlement, kind="payment", processor_event_id="S3-unknown",
                                  amount=700, processor_order_id="NOT-OURS")

    response = _get(api, merchant, f"/api/v2/settlements/{settlement.public_id}", merchantId=merchant.code)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["success"] is True and body["netAmount"] == settlement.net and body["lineCount"] == 4
    assert (body["page"], body["size"], body["totalElements"], body["totalPages"]) == (0, 500, 4, 1)
    assert body["lines"] == [  # in the acquirer's event id order
        {"eventId": "S3-a", "type": "ADJUSTMENT", "amount": 300, "feeAmount": 0, "taxAmount": 0,
         "sabpaisaTxnId": None, "paymentId": None, "merchantTxnId": None, "refundId": None},
        {"eventId": "S3-p0", "type": "PAYMENT", "amount": 50_000, "feeAmount": 200, "taxAmount": 36,
         "sabpaisaTxnId": paid.sabpaisa_txn_id, "paymentId": paid.payment_id, "merchantTxnId": paid.merchant_txn_id,
         "refundId": None},
        {"eventId": "S3-r0", "type": "REFUND", "amount": 5_000, "feeAmount": 0, "taxAmount": 0,
         "sabpaisaTxnId": paid.sabpaisa_txn_id, "paymentId": paid.payment_id, "merchantTxnId": paid.merchant_txn_id,
         "refundId": "R-77"},
        {"eventId": "S3-unknown", "type": "PAYMENT", "amount": 700, "feeAmount": 0, "taxAmount": 0,
         "sabpaisaTxnId": None, "paymentId": None, "merchantTxnId": None, "refundId": None},
    ]


def test_lines_come_a_page_at_a_time(api, merchant):
    settlement = make_settlement(merchant, day=day(22), processor_id="S4",
                                 payments=[make_success_payment(merchant, amount=1_000 + n) for n in range(5)])
    first = _get(api, merchant, f"/api/v2/settlements/{settlement.public_id}", size="2").json()
    last = _get(api, merchant, f"/api/v2/settlements/{settlement.public_id}", size="2", page="2").json()
    past = _get(api, merchant, f"/api/v2/settlements/{settlement.public_id}", size="2", page="3").json()
    assert [line["amount"] for line in first["lines"]] == [1_000, 1_001]
    assert [line["amount"] for line in last["lines"]] == [1_004]
    assert past["lines"] == [] and past["totalElements"] == 5 and past["totalPages"] == 3


def test_the_list_filters_by_the_day_paid_out_in_india_and_pages(api, merchant):
    made = {n: make_settlement(merchant, day=day(n), processor_id=f"D{n}") for n in (18, 19, 20, 21)}
    pending = make_settlement(merchant, day=None, processor_id="PENDING")
    # 20 Nov 00:10 IST is 19 Nov 18:40 UTC: it belongs to the 20th.
    just_after_midnight = make_settlement(merchant, day=datetime(2026, 11, 19, 18, 40, tzinfo=UTC),
                                          processor_id="EARLY20")

    ids = lambda body: [s["settlementId"] for s in body["settlements"]]  # noqa: E731
    everything = _get(api, merchant, "/api/v2/settlements").json()
    assert ids(everything)[0] == pending.public_id  # not paid yet: newest of all
    ranged = _get(api, merchant, "/api/v2/settlements", fromDate="2026-11-19", toDate="2026-11-20").json()
    assert ids(ranged) == [made[20].public_id, just_after_midnight.public_id, made[19].public_id]
    assert ranged["totalElements"] == 3
    page = _get(api, merchant, "/api/v2/settlements", fromDate="2026-11-19", size="2", page="1").json()
    assert ids(page) == [just_after_midnight.public_id, made[19].public_id]
    assert (page["totalElements"], page["totalPages"], page["count"]) == (4, 2, 2)
    assert _get(api, merchant, "/api/v2/settlements", toDate="2026-11-18").json()["totalElements"] == 1


@pytest.mark.parametrize("params, field", [
    ({"fromDate": "21-11-2026"}, "fromDate"),
    ({"toDate": "2026-02-30"}, "toDate"),
    ({"fromDate": "2026-11-21", "toDate": "2026-11-20"}, "toDate"),
    ({"page": "-1"}, "page"),
    ({"page": "one"}, "page"),
    ({"size": "0"}, "size"),
    ({"size": "101"}, "size"),
    ({"merchantId": "A\x00"}, "merchantId"),
])
def test_a_bad_list_parameter_is_a_validation_error_naming_it(api, merchant, params, field):
    body = _error(_get(api, merchant, "/api/v2/settlements", **params), 400, "VALIDATION_ERROR")
    assert body["errorMessage"].startswith(field), body


@pytest.mark.parametrize("params, field", [({"size": "1001"}, "size"), ({"page": "1.5"}, "page")])
def test_a_bad_detail_parameter_is_a_validation_error_naming_it(api, merchant, params, field):
    settlement = make_settlement(merchant, day=day(21), processor_id="S5")
    body = _error(_get(api, merchant, f"/api/v2/settlements/{settlement.public_id}", **params), 400, "VALIDATION_ERROR")
    assert body["errorMessage"].startswith(field), body


@pytest.mark.parametrize("name", ["1", "stl_", "stl_0", "stl_01", "stl_x", "STL_1", "stl_9999999999999999999"])
def test_a_name_that_is_no_settlement_id_is_not_found(api, merchant, name):
    _error(_get(api, merchant, f"/api/v2/settlements/{name}"), 404, "NOT_FOUND")


def test_the_public_id_is_random_and_not_the_row_number(api, merchant):
    # stl_<row number> told every merchant how many settlements the gateway had made for all.
    first = make_settlement(merchant, day=day(21), processor_id="R1")
    second = make_settlement(merchant, day=day(22), processor_id="R2")
    for settlement in (first, second):
        assert selectors.SETTLEMENT_ID_PATTERN.fullmatch(settlement.public_id)
        assert settlement.public_id != f"stl_{settlement.pk}"
    assert first.public_id != second.public_id
    # The row number names nothing.
    _error(_get(api, merchant, f"/api/v2/settlements/stl_{first.pk}"), 404, "NOT_FOUND")
    assert _get(api, merchant, f"/api/v2/settlements/{first.public_id}").json()["settlementId"] == first.public_id


def test_both_endpoints_need_the_key(api, merchant):
    settlement = make_settlement(merchant, day=day(21), processor_id="S6")
    _error(api.get("/api/v2/settlements"), 401, "UNAUTHORIZED")
    _error(api.get(f"/api/v2/settlements/{settlement.public_id}", HTTP_X_API_KEY="wrong" * 8), 401, "UNAUTHORIZED")
    _error(api.post("/api/v2/settlements", {}, format="json", HTTP_X_API_KEY=merchant.api_key), 405,
           "METHOD_NOT_ALLOWED")


def test_reading_costs_the_same_few_queries_however_many_settlements_and_lines(api, merchant):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries(path) -> int:
        _get(api, merchant, path)  # the key read again once (a merchant row saved since forgets it)
        with CaptureQueriesContext(connection) as captured:
            assert _get(api, merchant, path).status_code == 200
        return len(captured)

    few = make_settlement(merchant, day=day(20), processor_id="FEW", payments=[make_success_payment(merchant)])
    listed_one = queries("/api/v2/settlements")
    one_line = queries(f"/api/v2/settlements/{few.public_id}")
    many = make_settlement(merchant, day=day(21), processor_id="MANY",
                           payments=[make_success_payment(merchant) for _ in range(12)])
    for n in range(10):
        make_settlement(merchant, day=day(n + 1), processor_id=f"MORE{n}")
    assert queries("/api/v2/settlements") == listed_one <= 2
    assert queries(f"/api/v2/settlements/{many.public_id}") == one_line <= 2


def test_a_signed_read_is_verified_and_a_merchant_that_requires_signing_must_sign(api, merchant):
    settlement = make_settlement(merchant, day=day(21), processor_id="S7")
    path = f"/api/v2/settlements/{settlement.public_id}"
    now = int(time.time())
    signed_get = merchant.checksum(merchant.code, settlement.public_id, now)
    signed_list = merchant.checksum(merchant.code, "2026-11-01", "", now)
    assert _get(api, merchant, path, timestamp=str(now), checksum=signed_get).status_code == 200
    assert _get(api, merchant, "/api/v2/settlements", fromDate="2026-11-01", timestamp=str(now),
                checksum=signed_list).json()["totalElements"] == 1
    # Signed over another settlement, or another range: refused.
    _error(_get(api, merchant, path, timestamp=str(now), checksum=merchant.checksum(merchant.code, "stl_1", now)),
           400, "INVALID_SIGNATURE")
    _error(_get(api, merchant, "/api/v2/settlements", fromDate="2026-10-01", timestamp=str(now),
                checksum=signed_list), 400, "INVALID_SIGNATURE")

    merchant.merchant.signed_requests_required = True
    merchant.merchant.save(update_fields=["signed_requests_required"])
    _error(_get(api, merchant, path), 400, "INVALID_TIMESTAMP")
    _error(_get(api, merchant, "/api/v2/settlements", timestamp=str(now)), 400, "INVALID_SIGNATURE")
    assert _get(api, merchant, path, timestamp=str(now), checksum=signed_get).status_code == 200
