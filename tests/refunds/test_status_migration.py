"""Migration 0004 renames refund statuses to SabPaisa's (issue 17): the rows written before it,
and their timelines, read INITIATED and SUCCESS after it, and the way back restores them."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from refunds.models import Refund, RefundEvent
from refunds.services import refund_create
from refunds.tasks import refund_process
from tests.support.factories import make_success_payment

BEFORE = [("refunds", "0003_refund_console_search_indexes")]
AFTER = [("refunds", "0004_refund_statuses_initiated_success")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def _statuses():
    with connection.cursor() as cursor:
        cursor.execute("SELECT refund_id, status FROM refunds_refund ORDER BY refund_id")
        refunds = dict(cursor.fetchall())
        cursor.execute("SELECT DISTINCT from_status, to_status FROM refunds_refundevent WHERE kind = 'status' "
                       "ORDER BY 1, 2")
        return refunds, cursor.fetchall()


@pytest.fixture
def three_refunds(transactional_db, merchant):
    payment = make_success_payment(merchant, amount=300_000)
    done = refund_create(merchant=merchant.merchant, payment=payment, amount=1_000, refund_id="R-DONE").refund
    refund_process(done.pk)
    refund_create(merchant=merchant.merchant, payment=payment, amount=2_000, refund_id="R-OPEN")
    refused = refund_create(merchant=merchant.merchant, payment=payment, amount=100_013, refund_id="R-REFUSED").refund
    refund_process(refused.pk)  # the sandbox bank declines this amount
    yield
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_existing_refunds_and_their_timelines_are_renamed_both_ways(three_refunds):
    after = ({"R-DONE": "SUCCESS", "R-OPEN": "INITIATED", "R-REFUSED": "FAILED"},
             [("", "INITIATED"), ("INITIATED", "FAILED"), ("INITIATED", "SUCCESS")])
    assert _statuses() == after

    _migrate(BEFORE)
    assert _statuses() == ({"R-DONE": "PROCESSED", "R-OPEN": "PENDING", "R-REFUSED": "FAILED"},
                           [("", "PENDING"), ("PENDING", "FAILED"), ("PENDING", "PROCESSED")])

    _migrate(AFTER)
    assert _statuses() == after
    # The constraint and the partial index name the new statuses: the sweep still finds the open one.
    assert list(Refund.objects.filter(status=Refund.Status.INITIATED).values_list("refund_id", flat=True)) == \
        ["R-OPEN"]
    assert RefundEvent.objects.filter(to_status="PROCESSED").count() == 0
