"""gateway.core.transactions.ensure_no_transaction: fires inside any block the code opens, under
both kinds of pytest-django test, and never on a test case's own wrapping blocks."""
import pytest
from django.db import transaction

from gateway.core.transactions import ensure_no_transaction


@pytest.mark.django_db
def test_a_django_db_tests_own_atomic_blocks_are_not_the_callers_transaction():
    assert transaction.get_connection().in_atomic_block  # the test case's own block
    ensure_no_transaction()


@pytest.mark.django_db
def test_inside_an_atomic_block_it_raises_even_within_a_django_db_test():
    with transaction.atomic(), pytest.raises(RuntimeError, match="outside any transaction"):
        ensure_no_transaction()


@pytest.mark.django_db
def test_a_nested_savepoint_counts_too():
    with transaction.atomic(), transaction.atomic(), pytest.raises(RuntimeError):
        ensure_no_transaction()


@pytest.mark.django_db(transaction=True)
def test_in_autocommit_it_passes_and_inside_atomic_it_raises():
    assert not transaction.get_connection().in_atomic_block
    ensure_no_transaction()
    with transaction.atomic(), pytest.raises(RuntimeError):
        ensure_no_transaction()
