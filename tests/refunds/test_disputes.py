"""Disputes as data (refunds.disputes): opened and moved only through the transitions table, each
change with its event and its webhook in one transaction; the API that lists, reads and accepts
them; the money they take back; the sandbox's test disputes found by the sweep; the deadline
alert. Cashfree's disputes: tests/acquirer_cashfree/test_disputes*.py."""
from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from gateway.platform.models import AuditRecord
from payments.acquirer import get_acquirer
from payments.acquirer.base import DisputeEvidenceType, DisputeFound, SettlementEventFound
from payments.acquirer.sandbox import disputes as sandbox_disputes
from refunds.disputes import selectors
from refunds.disputes.state import TRANSITIONS, InvalidDisputeTransition
from refunds.disputes.sweep import REFRESH_AFTER, deadline_alerts_raise, disputes_sweep
from refunds.disputes.transitions import dispute_record
from refunds.models import Dispute, DisputeEvent, Settlement
from refunds.settlements import fetching
from tests.docs.test_docs_match_code import ROOT, documented_names, keys_of
from tests.support.factories import make_merchant, make_success_payment, refund_body
from webhooks.models import WebhookEvent

S = Dispute.Status
URL = "/api/v2/disputes"


T0 = timezone.now()


def found_for(payment, status=S.NEEDS_RESPONSE, *, processor_id="7001", minutes=0, **changes) -> DisputeFound:
    now = T0
    base = DisputeFound(
        processor_id=processor_id, order_ref=payment.sabpaisa_txn_id, status=status,
        processor_status=f"CHARGEBACK_{status.upper()}", kind="chargeback", amount=4_000, reason_code="13.1",
        reason_text="Merchandise / services not received", respond_by=now + timedelta(days=7),
        opened_at=now, updated_at=now + timedelta(minutes=minutes),
        preferred_evidence=(DisputeEvidenceType("Delivery/Service Proof", "proof of delivery"),))
    return replace(base, **changes)


def record(payment, found, **kwargs):
    return dispute_record(payment_pk=payment.pk, acquirer="sandbox", found=found, source="test", **kwargs)


def events_of(merchant, prefix="dispute."):
    return list(WebhookEvent.objects.filter(merchant=merchant.merchant, event_type__startswith=prefix)
                .order_by("created_at", "id"))


class Clock:
    """timezone.now(), moved by the test (everything of ours and Django's reads time through it)."""

    def __init__(self):
        self.at = timezone.now()

    def now(self):
        return self.at

    def move(self, by: timedelta) -> None:
        self.at += by


@pytest.fixture
def clock(monkeypatch):
    running = Clock()
    monkeypatch.setattr(timezone, "now", running.now)
    return running


@pytest.fixture
def paid(merchant):
    return make_success_payment(merchant, amount=10_000)


# -- the table ----------------------------------------------------------------------------------------

def test_every_status_has_a_row_and_accepted_is_final():
    assert set(TRANSITIONS) == set(S.values)
    assert TRANSITIONS[S.ACCEPTED] == frozenset()
    assert all(target in S.values for targets in TRANSITIONS.values() for target in targets)


# -- the processor's word, recorded -------------------------------------------------------------------

def test_a_new_dispute_is_opened_with_its_event_and_its_webhook(merchant, paid):
    recorded = record(paid, found_for(paid))
    dispute = recorded.dispute
    assert recorded.created and dispute.status == S.NEEDS_RESPONSE and dispute.amount == 4_000
    assert dispute.dispute_id.startswith("dsp_") and dispute.merchant == merchant.merchant
    [event] = dispute.events.all()
    assert (event.kind, event.from_status, event.to_status) == (DisputeEvent.Kind.STATUS, "", S.NEEDS_RESPONSE)
    [webhook] = events_of(merchant)
    assert webhook.event_type == "dispute.opened" and webhook.subject_id == dispute.dispute_id
    assert webhook.payload["status"] == "NEEDS_RESPONSE" and webhook.payload["amount"] == 4_000
    assert webhook.payload["respondBy"].endswith("Z")
    assert webhook.payload["preferredEvidence"] == [{"type": "Delivery/Service Proof",
                                                     "description": "proof of delivery"}]


def test_updates_and_the_close_each_send_their_webhook_with_their_own_key(merchant, paid):
    record(paid, found_for(paid))
    record(paid, found_for(paid, S.NEEDS_RESPONSE, minutes=1, kind="pre_arbitration",
                           processor_status="PRE_ARBITRATION_CREATED"))
    record(paid, found_for(paid, S.UNDER_REVIEW, minutes=2))
    record(paid, found_for(paid, S.WON, minutes=3, resolved_at=timezone.now()))
    sent = events_of(merchant)
    assert [e.event_type for e in sent] == ["dispute.opened", "dispute.updated", "dispute.updated", "dispute.closed"]
    assert len({e.payload["idempotency_key"] for e in sent}) == 4
    assert sent[-1].payload["outcome"] == "WON" and sent[-1].payload["resolvedAt"]
    dispute = Dispute.objects.get()
    assert [(e.kind, e.to_status) for e in dispute.events.all()] == [
        ("status", "needs_response"), ("update", ""), ("status", "under_review"), ("status", "won")]


def test_the_same_word_twice_changes_nothing_and_an_older_word_is_ignored(merchant, paid):
    record(paid, found_for(paid, minutes=5))
    again = record(paid, found_for(paid, minutes=5))
    older = record(paid, found_for(paid, S.LOST, minutes=1))
    assert not again.changed and not older.changed
    assert Dispute.objects.get().status == S.NEEDS_RESPONSE
    assert len(events_of(merchant)) == 1


def test_a_move_the_table_refuses_writes_nothing(merchant, paid):
    record(paid, found_for(paid, S.ACCEPTED))
    with pytest.raises(InvalidDisputeTransition):
        record(paid, found_for(paid, S.NEEDS_RESPONSE, minutes=1))
    assert Dispute.objects.get().status == S.ACCEPTED
    assert DisputeEvent.objects.count() == 1
    # Found already decided: opened and closed at once.
    assert [e.event_type for e in events_of(merchant)] == ["dispute.opened", "dispute.closed"]


# -- money --------------------------------------------------------------------------------------------

def test_a_lost_dispute_leaves_only_the_rest_refundable(api, merchant, paid, post_refund):
    record(paid, found_for(paid, S.LOST, amount=6_000))
    refused = post_refund(refund_body(merchant, paid, refundAmount=5_000))
    assert refused.status_code == 400 and refused.json()["errorCode"] == "REFUND_AMOUNT_EXCEEDED"
    listed = api.get("/api/v2/refunds", {"sabpaisaTxnId": paid.sabpaisa_txn_id}, **merchant.headers).json()
    assert listed["refundableAmount"] == 4_000
    assert post_refund(refund_body(merchant, paid, refundAmount=4_000)).status_code == 200


def test_a_chargeback_line_of_a_settlement_names_the_dispute_it_took_money_for(merchant, paid):
    # The payment has two disputes; the money went back for the one it lost, so the settlement's
    # chargeback line names that one. A chargeback of a payment without a dispute stays unlinked.
    record(paid, found_for(paid, S.NEEDS_RESPONSE, processor_id="7001", amount=1_000))
    record(paid, found_for(paid, S.LOST, processor_id="7002", amount=4_000))
    undisputed = make_success_payment(merchant, amount=5_000)
    settlement = Settlement.objects.create(acquirer="sandbox", processor_settlement_id="S-DSP")
    events = [SettlementEventFound(event_id="c1", kind="chargeback", amount=4_000, order_ref=paid.sabpaisa_txn_id),
              SettlementEventFound(event_id="c2", kind="chargeback", amount=700, order_ref=undisputed.sabpaisa_txn_id),
              SettlementEventFound(event_id="p1", kind="payment", amount=10_000, order_ref=paid.sabpaisa_txn_id)]
    assert fetching.lines_store(get_acquirer(), settlement, events) == 3
    lines = {line.processor_event_id: line for line in settlement.lines.select_related("dispute")}
    assert lines["c1"].dispute.processor_dispute_id == "7002"
    assert lines["c2"].dispute is None and lines["p1"].dispute is None
    assert list(Dispute.objects.get(processor_dispute_id="7002").settlement_lines.all()) == [lines["c1"]]


def test_a_dispute_still_open_takes_nothing_back(merchant, paid, post_refund):
    record(paid, found_for(paid, S.NEEDS_RESPONSE, amount=6_000))
    assert post_refund(refund_body(merchant, paid, refundAmount=10_000)).status_code == 200


# -- the API ------------------------------------------------------------------------------------------

def test_the_list_pages_and_filters_like_the_refund_list(api, merchant, paid):
    other_payment = make_success_payment(merchant, amount=20_000)
    record(paid, found_for(paid, processor_id="1"))
    record(other_payment, found_for(other_payment, S.WON, processor_id="2"))
    first = api.get(URL, {"size": "1"}, **merchant.headers).json()
    assert (first["count"], first["totalElements"], first["totalPages"]) == (1, 2, 2)
    assert first["disputes"] == first["items"] and first["disputes"][0]["status"] == "WON"  # newest first
    second = api.get(URL, {"size": "1", "page": "1"}, **merchant.headers).json()
    assert second["disputes"][0]["sabpaisaTxnId"] == paid.sabpaisa_txn_id
    by_status = api.get(URL, {"status": "needs_response"}, **merchant.headers).json()
    assert [d["status"] for d in by_status["disputes"]] == ["NEEDS_RESPONSE"]
    today = timezone.localdate().isoformat()
    assert api.get(URL, {"fromDate": today, "toDate": today}, **merchant.headers).json()["totalElements"] == 2
    tomorrow = (timezone.localdate() + timedelta(days=1)).isoformat()
    assert api.get(URL, {"fromDate": tomorrow}, **merchant.headers).json()["totalElements"] == 0
    by_payment = api.get(URL, {"sabpaisaTxnId": other_payment.sabpaisa_txn_id}, **merchant.headers).json()
    assert by_payment["totalElements"] == 1


@pytest.mark.parametrize("query, field", [
    ({"status": "PENDING"}, "status"), ({"fromDate": "27-11-2026"}, "fromDate"), ({"toDate": "tomorrow"}, "toDate"),
    ({"fromDate": "2026-11-27", "toDate": "2026-11-26"}, "toDate"), ({"size": "0"}, "size"),
    ({"size": "101"}, "size"), ({"page": "-1"}, "page"), ({"colour": "red"}, "colour"),
])
def test_a_bad_filter_is_a_validation_error_naming_it(api, merchant, query, field):
    answer = api.get(URL, query, **merchant.headers)
    assert answer.status_code == 400
    body = answer.json()
    assert body["errorCode"] == "VALIDATION_ERROR" and body["errorMessage"].startswith(field)


def test_another_merchants_dispute_is_not_found_as_one_that_does_not_exist(api, merchant, other_merchant, paid):
    dispute = record(paid, found_for(paid)).dispute
    mine = api.get(f"{URL}/{dispute.dispute_id}", **merchant.headers)
    assert mine.status_code == 200 and mine.json()["disputeId"] == dispute.dispute_id
    for path in (f"{URL}/{dispute.dispute_id}", f"{URL}/dsp_doesnotexist0000000"):
        theirs = api.get(path, **other_merchant.headers)
        assert theirs.status_code == 404 and theirs.json()["errorCode"] == "NOT_FOUND"
    accept = api.post(f"{URL}/{dispute.dispute_id}/accept", **other_merchant.headers)
    assert accept.status_code == 404
    assert api.get(URL, **other_merchant.headers).json()["totalElements"] == 0
    named = api.get(URL, {"merchantId": merchant.code}, **other_merchant.headers)
    assert named.status_code == 401


def test_every_field_of_the_record_and_its_webhooks_is_documented(api, merchant, paid):
    dispute = record(paid, found_for(paid, S.ACCEPTED, remarks="accepted", evidence=("proof.pdf",))).dispute
    answers = [api.get(f"{URL}/{dispute.dispute_id}", **merchant.headers).json(),
               api.get(URL, **merchant.headers).json(), *[e.payload for e in events_of(merchant)]]
    names = documented_names(ROOT / "docs" / "disputes.md")
    missing = sorted({name for answer in answers for _, name in keys_of(answer)} - names)
    assert not missing, f"docs/disputes.md does not document {missing}"


# -- the sandbox's test disputes, found by the sweep, accepted by the merchant -----------------------

def test_the_sandboxs_test_amount_is_disputed_found_by_the_sweep_and_accepted(api, merchant):
    payment = make_success_payment(merchant, amount=sandbox_disputes.DISPUTED_AMOUNT_WON)
    result = disputes_sweep()
    assert result.found == 1 and not result.errors
    dispute = Dispute.objects.get(payment=payment)
    assert dispute.status == S.NEEDS_RESPONSE and dispute.amount == payment.amount
    assert disputes_sweep().found == 0  # asked again: nothing new

    answer = api.post(f"{URL}/{dispute.dispute_id}/accept", **merchant.headers)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["status"] == "ACCEPTED" and body["outcome"] == "ACCEPTED" and body["acceptedAt"]
    assert [e.event_type for e in events_of(merchant)] == ["dispute.opened", "dispute.closed"]
    audit = AuditRecord.objects.get(action="dispute.accept")
    assert audit.object_id == str(dispute.pk) and audit.merchant == merchant.merchant

    again = api.post(f"{URL}/{dispute.dispute_id}/accept", **merchant.headers)
    assert again.status_code == 400 and again.json()["errorMessage"].startswith("status")


def test_the_sweep_stops_its_mark_before_a_payment_the_acquirer_did_not_answer_for(merchant):
    from payments.acquirer.base import AcquirerUnavailable
    from payments.acquirer.sandbox.acquirer import SandboxAcquirer
    from refunds.models import DisputeSweepMark

    first, second, third = (make_success_payment(merchant, amount=10_000) for _ in range(3))

    class DownFor(SandboxAcquirer):
        def __init__(self, down):
            self.down, self.asked = down, []

        def disputes_of(self, *, payment):
            self.asked.append(payment.pk)
            if payment.pk in self.down:
                raise AcquirerUnavailable("the processor did not answer")
            return super().disputes_of(payment=payment)

    DisputeSweepMark.objects.update_or_create(name="payments", defaults={"last_payment_pk": first.pk - 1})
    down_for_second = DownFor({second.pk})
    result = disputes_sweep(acquirer=down_for_second)
    assert result.payments_asked == 1 and len(result.errors) == 1
    assert down_for_second.asked == [first.pk, second.pk]
    assert DisputeSweepMark.objects.get(name="payments").last_payment_pk == first.pk

    still_down = DownFor({second.pk})
    disputes_sweep(acquirer=still_down)  # the next run starts at the unanswered payment
    assert still_down.asked[0] == second.pk
    assert DisputeSweepMark.objects.get(name="payments").last_payment_pk == first.pk

    answering = DownFor(set())
    assert disputes_sweep(acquirer=answering).payments_asked >= 2
    assert answering.asked[:2] == [second.pk, third.pk]


def test_a_sandbox_dispute_left_unanswered_is_lost_at_its_deadline(merchant, clock):
    payment = make_success_payment(merchant, amount=sandbox_disputes.DISPUTED_AMOUNT_LOST)
    disputes_sweep()
    dispute = Dispute.objects.get(payment=payment)
    assert dispute.deadline_alerted_at is None  # seven days to go
    clock.move(dispute.respond_by - timedelta(hours=47) - clock.now())
    disputes_sweep()
    dispute.refresh_from_db()
    assert dispute.deadline_alerted_at == clock.now()
    clock.move(timedelta(hours=48))
    disputes_sweep()
    dispute.refresh_from_db()
    assert dispute.status == S.LOST and dispute.resolved_at == dispute.respond_by
    assert [e.event_type for e in events_of(merchant)] == ["dispute.opened", "dispute.closed"]


def test_the_sweep_reads_and_marks_its_stale_disputes_a_batch_at_a_time(merchant, clock):
    def statements_on_disputes_in_a_refresh(how_many):
        for _ in range(how_many):
            make_success_payment(merchant, amount=sandbox_disputes.DISPUTED_AMOUNT_LOST)
        disputes_sweep()  # finds them
        clock.move(REFRESH_AFTER + timedelta(minutes=1))  # every one is stale, none has news
        with CaptureQueriesContext(connection) as captured:
            result = disputes_sweep()
        assert not result.errors and result.refreshed == 0
        assert not Dispute.objects.filter(synced_at__lt=clock.now() - timedelta(seconds=1)).exists()
        return sum(1 for q in captured.captured_queries if re.search(r'"refunds_dispute"', q["sql"]))

    few = statements_on_disputes_in_a_refresh(2)
    many = statements_on_disputes_in_a_refresh(6)  # the 2 again, and 6 more
    assert Dispute.objects.count() == 8
    assert many == few  # one read and one update for the batch, not two per dispute


# -- deadlines ----------------------------------------------------------------------------------------

def test_the_deadline_alert_fires_once_within_48_hours_and_not_before(merchant, paid):
    now = timezone.now()
    far = record(paid, found_for(paid, processor_id="1", respond_by=now + timedelta(hours=49))).dispute
    Dispute.objects.filter(pk=far.pk).update(deadline_alerted_at=None)
    near_payment = make_success_payment(merchant)
    near = record(near_payment, found_for(near_payment, processor_id="2",
                                          respond_by=now + timedelta(hours=47))).dispute
    assert deadline_alerts_raise(now=now) == 1
    assert deadline_alerts_raise(now=now) == 0
    near.refresh_from_db()
    far.refresh_from_db()
    assert near.deadline_alerted_at == now and far.deadline_alerted_at is None
    assert near.events.filter(kind=DisputeEvent.Kind.ALERT).count() == 1
    assert deadline_alerts_raise(now=now + timedelta(hours=1, seconds=1)) == 1  # far's turn
    assert selectors.disputes_at_risk(now=now)["due_soon"] == 1


def test_an_answered_dispute_raises_no_alert(merchant, paid):
    now = timezone.now()
    record(paid, found_for(paid, S.UNDER_REVIEW, respond_by=now + timedelta(hours=2)))
    assert deadline_alerts_raise(now=now) == 0
