"""Cashfree's settlements (`POST /settlements`, `POST /settlement/recon`) read through the
client against Prism serving the vendored description (0 violations, the `cashfree` fixture),
and stored by refunds.settlements.fetching: idempotent on Cashfree's ids, linked to ours."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest
from django.db import IntegrityError, transaction

from payments.acquirer.cashfree import client as cf
from payments.acquirer.cashfree import settlements as cf_settlements
from payments.acquirer.cashfree.acquirer import CashfreeAcquirer
from refunds.models import Settlement, SettlementLine
from refunds.settlements import fetching
from tests.acquirer_cashfree.double import cashfree_double  # noqa: F401 - the fixture
from tests.support.factories import make_merchant, make_payment, make_refund

START = datetime(2025, 1, 15, tzinfo=timezone.utc)
END = datetime(2025, 1, 17, tzinfo=timezone.utc)


def test_settlements_read_as_paise(cashfree):
    page = cashfree.fetch_settlements(start=START, end=END, limit=50)
    sent = cashfree.exchanges[-1]
    assert (sent.method, sent.path, sent.status) == ("POST", "/settlements", 200)
    assert sent.body == {"pagination": {"limit": 50},
                         "filters": {"start_date": START.isoformat(), "end_date": END.isoformat()}}
    # The description's example: ₹100 less ₹10 charge and ₹1.80 tax, ₹88.20 paid.
    [settlement] = page.items
    assert (settlement.cf_settlement_id, settlement.utr) == ("6121238", "N87912312")
    assert (settlement.gross, settlement.service_charge, settlement.service_tax, settlement.net) == (
        10_000, 1_000, 180, 8_820)
    assert page.cursor == ""


def test_recon_events_read_as_paise_and_the_cursor_sent_on(cashfree):
    page = cashfree.fetch_settlement_recon(settlement_ids=["1639775422"], limit=10)
    assert cashfree.exchanges[-1].body == {"pagination": {"limit": 10},
                                           "filters": {"cf_settlement_ids": ["1639775422"]}}
    assert page.cursor == "cursor"
    assert [event.event_type for event in page.items] == ["PAYMENT", "DISPUTE", "FUND_SWEEP_REVERSAL"]
    first = page.items[0]
    assert (first.amount, first.service_charge, first.service_tax) == (20_000, 200, 0)
    assert first.refund_id == ""  # the example's "null,"
    cashfree.fetch_settlement_recon(settlement_ids=["1639775422"], cursor=page.cursor, limit=10)
    assert cashfree.exchanges[-1].body["pagination"] == {"limit": 10, "cursor": "cursor"}


def test_the_client_refuses_a_query_it_cannot_send(cashfree):
    with pytest.raises(ValueError):
        cashfree.fetch_settlements(limit=0)
    with pytest.raises(ValueError):
        cashfree.fetch_settlement_recon(settlement_ids=[])
    assert cashfree.exchanges == []


@pytest.mark.django_db(transaction=True)
def test_fetch_stores_once_however_often_it_runs(cashfree):
    acquirer = CashfreeAcquirer(client=cashfree)
    first = fetching.settlements_fetch(acquirer, start=START, end=END)
    again = fetching.settlements_fetch(acquirer, start=START, end=END)
    assert (first.settlements_added, again.settlements_added) == (1, 0)
    assert again.lines_added == 0
    settlement = Settlement.objects.get()
    assert (settlement.acquirer, settlement.processor_settlement_id, settlement.utr) == (
        "cashfree", "6121238", "N87912312")
    assert (settlement.gross, settlement.fees, settlement.tax, settlement.net) == (10_000, 1_000, 180, 8_820)
    # The example repeats one event id three times: one line, and a cursor that comes back
    # again ended the walk instead of looping.
    assert first.lines_added == 1 == SettlementLine.objects.count()
    line = SettlementLine.objects.get()
    assert (line.kind, line.amount, line.fee, line.payment) == ("payment", 20_000, 200, None)


def _event(event_id, event_type, amount, *, order_id="", refund_id="", sale_type="CREDIT", fee=0, tax=0):
    return cf_settlements.event_found(cf.ReconEvent(event_id=event_id, event_type=event_type, sale_type=sale_type, amount=amount,
                         service_charge=fee, service_tax=tax, cf_settlement_id="S1", utr="UTR1",
                         order_id=order_id, cf_payment_id="", refund_id=refund_id))


@pytest.mark.django_db
def test_lines_link_to_our_payments_and_refunds_and_totals_follow():
    merchant = make_merchant()
    payment = make_payment(merchant, amount=50_000)
    refund = make_refund(payment, amount=5_000)
    settlement = Settlement.objects.create(acquirer="cashfree", processor_settlement_id="S1")
    events = [
        _event("e1", "PAYMENT", 50_000, order_id=payment.sabpaisa_txn_id, fee=1_000, tax=180),
        _event("e2", "REFUND", 5_000, order_id=payment.sabpaisa_txn_id, refund_id=refund.refund_id),
        _event("e3", "DISPUTE", 700, order_id="not_ours"),
        _event("e4", "FUND_SWEEP_REVERSAL", 300, sale_type="DEBIT"),
    ]
    acquirer = CashfreeAcquirer(client=object())
    assert fetching.lines_store(acquirer, settlement, events) == 4
    assert fetching.lines_store(acquirer, settlement, events) == 0
    lines = {line.processor_event_id: line for line in settlement.lines.all()}
    assert lines["e1"].payment == payment and lines["e1"].refund is None
    assert lines["e2"].refund == refund and lines["e2"].kind == "refund"
    assert lines["e3"].kind == "chargeback" and lines["e3"].payment is None
    assert (lines["e4"].kind, lines["e4"].amount) == ("adjustment", -300)
    settlement.refresh_from_db()
    assert (settlement.refunds, settlement.chargebacks, settlement.adjustments) == (5_000, 700, -300)
    assert settlement.merchant_id == payment.merchant_id


@pytest.mark.django_db
def test_the_database_refuses_what_cannot_be():
    settlement = Settlement.objects.create(acquirer="cashfree", processor_settlement_id="S2")
    with pytest.raises(IntegrityError), transaction.atomic():
        Settlement.objects.create(acquirer="cashfree", processor_settlement_id="S2")
    with pytest.raises(IntegrityError), transaction.atomic():
        SettlementLine.objects.create(settlement=settlement, kind="payment", processor_event_id="x",
                                      amount=-1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Settlement.objects.create(acquirer="cashfree", processor_settlement_id="S3", fees=-1)
    SettlementLine.objects.create(settlement=settlement, kind="payment", processor_event_id="y", amount=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        SettlementLine.objects.create(settlement=settlement, kind="refund", processor_event_id="y", amount=1)


@pytest.mark.django_db(transaction=True)
def test_the_beat_task_fetches_from_whichever_acquirer_is_configured(settings, prism_url):
    from refunds.settlement_tasks import settlements_fetch_task
    settings.GATEWAY_ACQUIRER = "cashfree"
    settings.CASHFREE_BASE_URL, settings.CASHFREE_CLIENT_ID = prism_url, "TEST1234567890"
    settings.CASHFREE_CLIENT_SECRET = "cfsk_ma_test_0123456789abcdef"
    from payments.acquirer import _load
    _load.cache_clear()
    try:
        assert settlements_fetch_task() == 1
        assert settlements_fetch_task() == 0
    finally:
        _load.cache_clear()
    assert Settlement.objects.count() == 1
    assert Settlement.objects.get().acquirer == "cashfree"


def test_a_list_prism_cut_short_keeps_its_whole_violations():
    from .conftest import violations_read
    whole = '{"location":["request","body","x"],"severity":"Error","code":"type","message":"m"}'
    assert violations_read(f'Too many violations! [{whole},{{"location":["resp') == [
        {"location": ["request", "body", "x"], "severity": "Error", "code": "type", "message": "m"}]
    assert violations_read("") == []


@pytest.mark.django_db(transaction=True)
def test_the_settlement_webhook_stores_the_payout_through_the_inbound_door(cashfree_double, live_server):
    """Cashfree's SettlementWebhook (the description's schema, checked by the double) reaches
    POST /acquirer/cashfree/webhooks: the settlement is stored and its events read from Cashfree,
    linked to our payment; the same delivery again adds nothing."""
    from payments.acquirer.cashfree.client import CashfreeClient, Customer, idempotency_key
    from tests.acquirer_cashfree.double import CLIENT_SECRET

    cashfree_double.webhook_url = live_server.url + "/acquirer/cashfree/webhooks"
    payment = make_payment(make_merchant(), amount=10_050)
    client = CashfreeClient(base_url=cashfree_double.base_url, client_id=cashfree_double.client_id,
                            client_secret=CLIENT_SECRET, timeout=5)
    order = client.create_order(order_id=payment.sabpaisa_txn_id, amount=10_050,
                                customer=Customer(customer_id="cust_0001", phone="9876543210", email="a@example.in",
                                                  name="Asha"),
                                idempotency_key=idempotency_key(payment.sabpaisa_txn_id, "order"),
                                return_url="https://gw.example/return", notify_url="https://gw.example/hook")
    client.pay_upi_qr(payment_session_id=order.payment_session_id, idempotency_key=idempotency_key("q", "1"))
    cashfree_double.settle_payment(payment.sabpaisa_txn_id, "SUCCESS", notify=False)
    entity = cashfree_double.settle()
    delivery = cashfree_double.send_webhook(cashfree_double.settlement_webhook(entity["cf_settlement_id"]))
    assert delivery.status == 200, delivery.answer
    settlement = Settlement.objects.get(processor_settlement_id=entity["cf_settlement_id"])
    # 1.90 % of ₹100.50 is 190.95 paise: 191; GST 34.38: 34.
    assert (settlement.gross, settlement.fees, settlement.tax, settlement.net) == (10_050, 191, 34, 9_825)
    [line] = settlement.lines.all()
    assert (line.payment, line.amount, line.fee, line.tax) == (payment, 10_050, 191, 34)
    again = cashfree_double.send_webhook({}, body=delivery.body)
    assert again.status == 200 and SettlementLine.objects.count() == 1
