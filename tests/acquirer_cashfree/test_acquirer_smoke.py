"""manage.py acquirer_smoke, which an operator runs once against Cashfree's sandbox with real
test credentials. It cannot reach Cashfree here (no outside network), so it runs against the
stateful double (tests/acquirer_cashfree/double.py, every answer and webhook checked against
Cashfree's description), its /simulate request is checked by Prism serving the description, and
its webhook arrives at the gateway's own door on a live server."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from payments.models import AcquirerNotice
from tests.acquirer_cashfree.double import cashfree_double  # noqa: F401 - a fixture

from .conftest import cashfree  # noqa: F401 - a fixture
from .test_acquirer import sent


@pytest.mark.django_db(transaction=True)
def test_the_smoke_run_pays_by_every_method_refunds_and_receives_a_webhook(cashfree_double, live_server, settings):
    settings.GATEWAY_PUBLIC_URL = live_server.url
    cashfree_double.webhook_url = f"{live_server.url}/acquirer/cashfree/webhooks"
    out = StringIO()
    call_command("acquirer_smoke", "--webhook-wait", "20", stdout=out)
    report = out.getvalue()
    for method in ("UPI intent", "UPI collect", "card", "net banking", "wallet", "bank transfer"):
        assert f"{method}: SUCCESS" in report, report
    assert "refund: SUCCESS" in report or "refund: PENDING" in report, report
    assert f"configure {live_server.url}/acquirer/cashfree/webhooks" in report
    assert "DOES NOT HOLD" not in report and "unknown" not in report, report
    assert "webhook signature: x-webhook-signature over x-webhook-timestamp and the body: holds" in report
    simulated = [call for call in cashfree_double.calls if call.path == "/pg/simulate"]
    assert len(simulated) == 6 and {call.status for call in simulated} == {200}
    assert AcquirerNotice.objects.filter(order_id__startswith="smoke_").exists()


@pytest.mark.django_db(transaction=True)
def test_without_a_webhook_the_run_says_so_and_still_reports(cashfree_double, settings):
    out = StringIO()
    call_command("acquirer_smoke", "--webhook-wait", "0", stdout=out)
    assert "none received" in out.getvalue()
    assert "webhook signature: x-webhook-signature over x-webhook-timestamp and the body: DOES NOT HOLD" in (
        out.getvalue())


@pytest.mark.django_db
def test_the_smoke_run_refuses_cashfrees_production(settings):
    settings.CASHFREE_BASE_URL = "https://api.cashfree.com/pg"
    settings.CASHFREE_CLIENT_ID, settings.CASHFREE_CLIENT_SECRET = "id", "secret"
    with pytest.raises(CommandError, match="sandbox only"):
        call_command("acquirer_smoke", "--webhook-wait", "0", stdout=StringIO())


def test_the_simulate_request_is_one_cashfrees_description_allows(cashfree):
    answer = cashfree.simulate_payment(cf_payment_id="91235", status="SUCCESS",
                                       idempotency_key="47bf8872-46fe-11ee-be56-0242ac120002")
    assert isinstance(answer, dict)
    [call] = sent(cashfree, "POST", "/simulate")
    assert call.body == {"entity": "PAYMENTS", "entity_id": "91235",
                         "entity_simulation": {"payment_status": "SUCCESS"}}
