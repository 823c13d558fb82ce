"""`ensure_no_transaction()`: the check behind "call it outside any transaction".

Some functions must run with nothing of theirs uncommitted and no row lock held: they call an
acquirer or another server and record its answer in transactions of their own (payments.services.upi's
`upi_pay`). Called inside a caller's `transaction.atomic()`, their commits would be the
caller's, a row lock could be held across the network, and an answer recorded by them could be
rolled back after the money moved. So they refuse at once, as a programming error.

Tests: pytest-django's `django_db` tests (Django's TestCase) wrap each test in atomic blocks of
their own, marked `_from_testcase`; those are not the caller's transaction and are passed over,
exactly as Django's own `atomic(durable=True)` passes them over. Any block a test (or the code
under test) opens itself still counts, so the check fires under every kind of test.
"""
from __future__ import annotations

from django.db import transaction


def ensure_no_transaction(using: str | None = None) -> None:
    """Raise RuntimeError when called inside an atomic block (other than a test case's own)."""
    connection = transaction.get_connection(using)
    if not connection.in_atomic_block:
        return
    if not connection.atomic_blocks or any(not block._from_testcase for block in connection.atomic_blocks):
        raise RuntimeError("this function must be called outside any transaction")
