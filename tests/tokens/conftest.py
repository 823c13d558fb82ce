"""Fixtures of the tokenisation tests. The hosted-checkout tests' fixtures (signed sessions, a
real Chromium, the merchant's own site on loopback) are reused as they are."""
from __future__ import annotations

import pytest

from tests.payments.hosted.conftest import (  # noqa: F401 - fixtures, used by name
    browser,
    checkout,
    create_session,
    merchant_site,
    shop,
    start,
)
from tests.support.factories import make_merchant, make_token


@pytest.fixture
def rival(db):
    """Another merchant, with a token and payments of its own."""
    return make_merchant(name="Rival Tea Traders")


@pytest.fixture
def token_of(api, create_session):
    """token_of(tm, **card) -> the creation response of a token of `tm`, made as in life: a
    checkout where the customer ticks save_card and passes 3-D Secure, then POST /api/v2/tokens."""

    def _make(tm, **card) -> dict:
        return make_token(api, create_session, tm, **card)

    return _make
