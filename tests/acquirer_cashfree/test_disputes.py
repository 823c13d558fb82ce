"""Cashfree's disputes: every dispute call of the client against Prism serving the vendored
description (no request it refuses), the one reading of a dispute (disputes.py) over every status
the description lists, and disputes arriving through the stateful double: its webhooks through
the inbound door, a lost webhook caught by the sweep, the merchant's accept and evidence reaching
Cashfree."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from payments.acquirer.base import (
    DISPUTE_ACCEPTED,
    DISPUTE_LOST,
    DISPUTE_NEEDS_RESPONSE,
    DISPUTE_OPEN,
    DISPUTE_UNDER_REVIEW,
    DISPUTE_WON,
    DisputeNotice,
)
from payments.acquirer.cashfree import disputes as cf_disputes
from payments.acquirer.cashfree.client import multipart_form
from payments.acquirer.cashfree.errors import CashfreeBadResponse
from payments.acquirer.cashfree.notices import notice_parse
from tests.acquirer_cashfree.double import description

IST = timezone(timedelta(hours=5, minutes=30))
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


# -- the client against Cashfree's description (Prism) ---------------------------------------------

def test_every_dispute_call_is_one_the_description_allows(cashfree):
    listed = cashfree.get_order_disputes("order_1944392DR1kMTFYdIf8bI2awAcC3i9FTa")
    assert listed and all("dispute_id" in item for item in listed)
    one = cashfree.get_dispute("433447817")
    assert one["dispute_id"]
    accepted = cashfree.accept_dispute("433447817")
    assert accepted["dispute_status"]
    after = cashfree.upload_dispute_document("433447817", doc_type="Delivery/Service Proof", filename="proof.pdf",
                                             content_type="application/pdf", content=PDF,
                                             idempotency_key="47bf8872-46fe-11ee-be56-0242ac120002", note="courier")
    assert after["dispute_id"]
    assert [(e.method, e.path.split("/pg")[-1] if "/pg" in e.path else e.path) for e in cashfree.exchanges] == [
        ("GET", "/orders/order_1944392DR1kMTFYdIf8bI2awAcC3i9FTa/disputes"), ("GET", "/disputes/433447817"),
        ("PUT", "/disputes/433447817/accept"), ("POST", "/disputes/433447817/documents")]
    upload = cashfree.exchanges[-1]
    assert upload.headers["Content-Type"].startswith("multipart/form-data; boundary=")
    assert upload.headers["x-idempotency-key"] and b"%PDF-1.4" in upload.body["multipart"]
    # The fixture fails the test on any request violation (and any unexplained answer one).


def test_the_descriptions_own_dispute_example_reads_as_a_dispute(cashfree):
    found = cf_disputes.dispute_found(cashfree.get_dispute("433447817"))
    assert found.processor_id == "433447817" and found.kind == "dispute"
    assert found.status == DISPUTE_UNDER_REVIEW  # its example is DISPUTE_DOCS_RECEIVED
    assert found.amount == 1000 and found.order_ref == "Load_test_0103_FGA4HF12AC"
    # Its times carry no offset: read as India's (2023-01-19T00:00:00 IST), never as UTC.
    assert found.respond_by == datetime(2023, 1, 18, 18, 30, tzinfo=timezone.utc)
    assert found.resolved_at is None  # 9999-09-09: not resolved
    assert [e.code for e in found.preferred_evidence] == ["Delivery/Service Proof"]


def test_a_dispute_id_that_is_not_a_number_never_leaves(cashfree):
    with pytest.raises(ValueError):
        cashfree.get_dispute("433447817/../../orders")
    assert cashfree.exchanges == []


# -- one reading of Cashfree's statuses -------------------------------------------------------------

def _statuses() -> list[str]:
    return description().document["components"]["schemas"]["DisputesEntity"]["properties"]["dispute_status"]["enum"]


STAGE_STATUS = {"CREATED": DISPUTE_NEEDS_RESPONSE, "INSUFFICIENT_EVIDENCE": DISPUTE_NEEDS_RESPONSE,
                "DOCS_RECEIVED": DISPUTE_UNDER_REVIEW, "UNDER_REVIEW": DISPUTE_UNDER_REVIEW,
                "MERCHANT_WON": DISPUTE_WON, "MERCHANT_LOST": DISPUTE_LOST, "MERCHANT_ACCEPTED": DISPUTE_ACCEPTED}


@pytest.mark.parametrize("processor_status", _statuses())
def test_every_status_the_description_lists_maps_onto_ours(processor_status):
    status, kind = cf_disputes.status_of(processor_status)
    stage = next(stage for stage in STAGE_STATUS if processor_status.endswith("_" + stage))
    assert status == STAGE_STATUS[stage]
    assert processor_status.startswith(kind.upper() + "_")


def test_a_created_dispute_whose_action_is_cashfrees_is_open_not_yet_the_merchants():
    assert cf_disputes.status_of("CHARGEBACK_CREATED", action_on="CASHFREE") == (DISPUTE_OPEN, "chargeback")
    assert cf_disputes.status_of("CHARGEBACK_CREATED", action_on="MERCHANT") == (DISPUTE_NEEDS_RESPONSE, "chargeback")


def test_a_status_cashfree_does_not_document_is_a_bad_answer():
    with pytest.raises(CashfreeBadResponse):
        cf_disputes.status_of("DISPUTE_SOMETHING_NEW")


def test_times_keep_their_offset_and_naive_ones_are_india():
    assert cf_disputes.cashfree_time("2023-06-18T23:59:59+05:30") == datetime(2023, 6, 18, 18, 29, 59,
                                                                                 tzinfo=timezone.utc)
    assert cf_disputes.cashfree_time("2023-06-18 23:59:59") == datetime(2023, 6, 18, 23, 59, 59, tzinfo=IST)
    assert cf_disputes.cashfree_time("9999-09-09T00:00:00") is None
    assert cf_disputes.cashfree_time("soon") is None


def test_a_dispute_webhook_reads_as_the_dispute_calls_read_it():
    # Cashfree's documented DISPUTE_CREATED sample, as its guide gives it (amounts as JSON numbers).
    payload = {"data": {"dispute": {"dispute_id": "433475258", "dispute_type": "DISPUTE", "reason_code": "1402",
                                    "reason_description": "Duplicate Processing", "dispute_amount": Decimal("3"),
                                    "created_at": "2023-06-15T21:49:48+05:30",
                                    "updated_at": "2023-06-15T21:49:48+05:30",
                                    "respond_by": "2023-06-18T23:59:59+05:30", "dispute_status": "DISPUTE_CREATED",
                                    "cf_dispute_remarks": "Dispute is created, please take action",
                                    "dispute_action_on": "MERCHANT"},
                        "order_details": {"order_id": "order_1944392DR1kMTFYdIf8bI2awAcC3i9FTa",
                                          "order_amount": 3, "order_currency": "INR", "cf_payment_id": 885473311,
                                          "payment_amount": 3, "payment_currency": "INR"},
                        "customer_details": {"customer_name": "Dileep Kumar s", "customer_phone": "8000000000"}},
               "event_time": "2023-06-15T21:50:04+05:30", "type": "DISPUTE_CREATED"}
    notice = notice_parse(payload)
    assert isinstance(notice, DisputeNotice)
    found = notice.dispute
    assert (found.processor_id, found.order_ref, found.status, found.amount) == (
        "433475258", "order_1944392DR1kMTFYdIf8bI2awAcC3i9FTa", DISPUTE_NEEDS_RESPONSE, 300)
    assert found.respond_by == datetime(2023, 6, 18, 18, 29, 59, tzinfo=timezone.utc)


def test_the_form_boundary_never_appears_in_the_file_and_the_name_is_made_safe():
    body, content_type = multipart_form({"doc_type": "Refund Proof"},
                                        file=("file", 'x"\r\nEvil: 1.pdf', "application/pdf", PDF))
    boundary = content_type.split("boundary=")[1]
    assert body.count(boundary.encode()) == 3 and b'filename="x___Evil__1.pdf"' in body
