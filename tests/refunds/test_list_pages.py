"""GET /api/v2/refunds as SabPaisa's SDK 1.0.1 calls it (issue 17): the merchant from
X-Merchant-Id, optional txnId, status, fromDate and toDate filters, pages from 0 of 1 to 100,
the list under `items` with page, size, totalElements and totalPages, beside today's keys."""
from datetime import datetime, timezone

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from refunds.models import Refund
from refunds.services import refund_create
from refunds.tasks import refund_process
from tests.support.factories import make_success_payment

pytestmark = pytest.mark.django_db


def _list(api, who, header=True, **params):
    headers = {"HTTP_X_API_KEY": who.api_key}
    if header:
        headers["HTTP_X_MERCHANT_ID"] = who.code
    return api.get("/api/v2/refunds", params, **headers)


def _refunds(merchant, count, amount=100):
    payment = make_success_payment(merchant, amount=100_000)
    return [refund_create(merchant=merchant.merchant, payment=payment, amount=amount + index).refund
            for index in range(count)], payment


def test_without_a_transaction_the_merchant_header_lists_all_its_refunds_newest_first(api, merchant,
                                                                                      other_merchant):
    first, _ = _refunds(merchant, 2)
    second, _ = _refunds(merchant, 1)
    _refunds(other_merchant, 2)
    response = _list(api, merchant)
    assert response.status_code == 200, response.json()
    body = response.json()
    expected = [r.refund_id for r in reversed(first + second)]
    assert [r["refundId"] for r in body["items"]] == expected
    assert body["refunds"] == body["items"] and body["count"] == 3
    assert (body["page"], body["size"], body["totalElements"], body["totalPages"]) == (0, 20, 3, 1)
    assert "refundableAmount" not in body  # the payment totals belong to a listed transaction


def test_without_merchant_id_or_the_header_the_merchant_id_is_missing(api, merchant):
    _refunds(merchant, 1)
    response = _list(api, merchant, header=False)
    assert response.status_code == 400
    assert response.json()["errorCode"] == "VALIDATION_ERROR"
    assert response.json()["errorMessage"].startswith("merchantId")


def test_merchant_id_in_the_query_is_enough(api, merchant):
    _refunds(merchant, 1)
    response = _list(api, merchant, header=False, merchantId=merchant.code)
    assert response.status_code == 200 and response.json()["totalElements"] == 1


def test_another_merchants_code_in_the_header_is_unauthorized(api, merchant, other_merchant):
    response = api.get("/api/v2/refunds", HTTP_X_API_KEY=merchant.api_key, HTTP_X_MERCHANT_ID=other_merchant.code)
    assert (response.status_code, response.json()["errorCode"]) == (401, "UNAUTHORIZED")


def test_pages_split_the_list_without_overlap(api, merchant):
    made, _ = _refunds(merchant, 5)
    pages = [_list(api, merchant, page=str(page), size="2").json() for page in range(4)]
    assert [len(page["items"]) for page in pages] == [2, 2, 1, 0]
    assert all((page["totalElements"], page["totalPages"], page["size"]) == (5, 3, 2) for page in pages)
    assert [page["page"] for page in pages] == [0, 1, 2, 3]
    seen = [item["refundId"] for page in pages for item in page["items"]]
    assert seen == [r.refund_id for r in reversed(made)]


def test_a_transactions_list_keeps_its_totals_and_gains_the_page(api, merchant):
    made, payment = _refunds(merchant, 3)
    _refunds(merchant, 2)  # another payment's refunds are not listed
    body = _list(api, merchant, txnId=payment.sabpaisa_txn_id, size="2").json()
    assert [r["refundId"] for r in body["items"]] == [r.refund_id for r in made[:2]]  # oldest first
    assert body["sabpaisaTxnId"] == payment.sabpaisa_txn_id
    assert body["refundPendingAmount"] == sum(r.amount for r in made)
    assert (body["count"], body["totalElements"], body["totalPages"]) == (2, 3, 2)


def test_status_filter_takes_sabpaisas_names(api, merchant):
    (done, waiting), _ = _refunds(merchant, 2)
    refund_process(done.pk)
    success = _list(api, merchant, status="SUCCESS").json()
    initiated = _list(api, merchant, status="INITIATED").json()
    assert [r["refundId"] for r in success["items"]] == [done.refund_id]
    assert [r["refundId"] for r in initiated["items"]] == [waiting.refund_id]
    assert _list(api, merchant, status="FAILED").json()["totalElements"] == 0


def test_date_filters_are_whole_asia_kolkata_days_both_included(api, merchant):
    (late, early_next), _ = _refunds(merchant, 2)
    # 23:59 IST on the 20th and 00:01 IST on the 21st.
    Refund.objects.filter(pk=late.pk).update(created_at=datetime(2026, 11, 20, 18, 29, tzinfo=timezone.utc))
    Refund.objects.filter(pk=early_next.pk).update(created_at=datetime(2026, 11, 20, 18, 31, tzinfo=timezone.utc))

    def ids(**params):
        return [r["refundId"] for r in _list(api, merchant, **params).json()["items"]]

    assert ids(fromDate="2026-11-21") == [early_next.refund_id]
    assert ids(toDate="2026-11-20") == [late.refund_id]
    assert ids(fromDate="2026-11-20", toDate="2026-11-20") == [late.refund_id]
    assert ids(fromDate="2026-11-20", toDate="2026-11-21") == [early_next.refund_id, late.refund_id]


@pytest.mark.parametrize("name,value", [
    ("size", "0"), ("size", "101"), ("size", "ten"), ("size", "2.0"), ("size", ""),
    ("page", "-1"), ("page", "1.5"), ("page", "99999999999"),
    ("status", "PENDING"), ("status", "PROCESSED"), ("status", "success"),
    ("fromDate", "2026-13-01"), ("fromDate", "21-11-2026"), ("toDate", "2026-11-21T00:00:00"),
])
def test_bad_values_are_validation_errors_naming_the_parameter(api, merchant, name, value):
    response = _list(api, merchant, **{name: value})
    assert response.status_code == 400
    assert response.json()["errorCode"] == "VALIDATION_ERROR"
    assert response.json()["errorMessage"].startswith(name), response.json()


def test_to_date_before_from_date_is_a_validation_error_naming_to_date(api, merchant):
    response = _list(api, merchant, fromDate="2026-11-21", toDate="2026-11-20")
    assert response.status_code == 400 and response.json()["errorMessage"].startswith("toDate")


def test_an_unknown_transaction_is_not_found(api, merchant, other_merchant):
    _, theirs = _refunds(other_merchant, 1)
    response = _list(api, merchant, txnId=theirs.sabpaisa_txn_id)
    assert (response.status_code, response.json()["errorCode"]) == (404, "NOT_FOUND")


@pytest.mark.parametrize("params", [{}, {"status": "INITIATED"}, {"fromDate": "2020-01-01", "toDate": "2030-01-01"}])
def test_a_page_is_read_from_an_index_in_order_not_by_sorting_the_merchants_refunds(api, merchant, params):
    _refunds(merchant, 3)
    with CaptureQueriesContext(connection) as captured:
        assert _list(api, merchant, size="2", **params).status_code == 200
    page_sql, = [q["sql"] for q in captured.captured_queries
                 if 'FROM "refunds_refund"' in q["sql"] and "LIMIT" in q["sql"] and "ORDER BY" in q["sql"]]
    with connection.cursor() as cursor:
        # A table of three rows is cheapest to read whole; forbid that to see the plan a big table gets.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + page_sql)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "refund_merchant" in plan, plan
    assert "Sort" not in plan, plan


def test_a_merchant_requiring_signed_requests_signs_the_merchant_wide_list_over_an_empty_transaction(api, merchant):
    import time

    from gateway.core.signing import compute_checksum

    merchant.merchant.signed_requests_required = True
    merchant.merchant.save(update_fields=["signed_requests_required"])
    _refunds(merchant, 1)
    assert _list(api, merchant).json()["errorCode"] == "INVALID_TIMESTAMP"
    ts = int(time.time())
    signed = compute_checksum(merchant.secret_key, merchant.code, "", ts)
    response = _list(api, merchant, timestamp=str(ts), checksum=signed)
    assert response.status_code == 200 and response.json()["totalElements"] == 1
