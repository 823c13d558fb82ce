"""Migration 0008 fills the payment's refund totals (payments' 0017 adds the columns) from the
refunds written before them: refunded is the sum of SUCCESS refunds, pending of INITIATED ones,
a FAILED refund counts in neither, and a payment without refunds keeps zero."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from payments.models import Payment
from refunds.selectors import payments_with_refund_totals_off
from refunds.services import refund_create
from refunds.tasks import refund_process
from tests.support.factories import make_success_payment

BEFORE = [("refunds", "0007_merge_refund_api_key_and_list_indexes")]
AFTER = [("refunds", "0008_payment_refund_totals_fill")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


@pytest.fixture
def refunded_before_the_columns(transactional_db, merchant):
    """Two payments with refunds in each status, one without, and every total back at zero, as
    the columns stood when payments' migration 0017 added them."""
    payment = make_success_payment(merchant, amount=300_000)
    done = refund_create(merchant=merchant.merchant, payment=payment, amount=1_000).refund
    refund_process(done.pk)
    refund_create(merchant=merchant.merchant, payment=payment, amount=2_000)
    refused = refund_create(merchant=merchant.merchant, payment=payment, amount=100_013).refund
    refund_process(refused.pk)  # the sandbox bank declines this amount
    other = make_success_payment(merchant, amount=5_000)
    refund_create(merchant=merchant.merchant, payment=other, amount=700)
    untouched = make_success_payment(merchant, amount=5_000)
    _migrate(BEFORE)
    Payment.objects.update(refunded_amount=0, refund_pending_amount=0)
    yield payment, other, untouched
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_existing_payments_get_the_sums_of_their_refunds(refunded_before_the_columns):
    payment, other, untouched = refunded_before_the_columns
    assert len(payments_with_refund_totals_off()) == 2
    _migrate(AFTER)
    totals = dict((pk, (refunded, pending)) for pk, refunded, pending in
                  Payment.objects.values_list("pk", "refunded_amount", "refund_pending_amount"))
    assert totals == {payment.pk: (1_000, 2_000), other.pk: (0, 700), untouched.pk: (0, 0)}
    assert payments_with_refund_totals_off() == []
