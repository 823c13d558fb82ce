"""gateway.platform.auth reuses a key and its merchant read a moment ago, and forgets them as soon as
either changes in this process; with API_KEY_CACHE_SECONDS=0 it reads them every time."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from gateway.platform import auth
from gateway.core.errors import Unauthorized
from gateway.platform.services import merchant_rotate_api_key
from tests.support.factories import make_merchant

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    auth._recent.clear()
    yield
    auth._recent.clear()


def _statements(raw_key: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        auth.merchant_for_api_key(raw_key)
    return len(queries)


def test_a_key_read_a_moment_ago_is_not_read_again(settings):
    settings.API_KEY_CACHE_SECONDS = 60
    tm = make_merchant()
    assert _statements(tm.api_key) == 1
    assert _statements(tm.api_key) == 0
    # Each request still gets instances of its own.
    assert auth.merchant_for_api_key(tm.api_key) is not auth.merchant_for_api_key(tm.api_key)


def test_a_wrong_key_with_a_known_prefix_is_still_refused_from_the_cache(settings):
    settings.API_KEY_CACHE_SECONDS = 60
    tm = make_merchant()
    auth.merchant_for_api_key(tm.api_key)
    with pytest.raises(Unauthorized):
        auth.merchant_for_api_key(tm.api_key[:-1] + ("A" if tm.api_key[-1] != "A" else "B"))


def test_deactivating_the_merchant_is_seen_at_once_in_this_process(settings):
    settings.API_KEY_CACHE_SECONDS = 60
    tm = make_merchant()
    auth.merchant_for_api_key(tm.api_key)
    tm.merchant.is_active = False
    tm.merchant.save()
    with pytest.raises(Unauthorized):
        auth.merchant_for_api_key(tm.api_key)


def test_a_rotated_key_is_refused_at_once_in_this_process(settings):
    settings.API_KEY_CACHE_SECONDS = 60
    tm = make_merchant()
    auth.merchant_for_api_key(tm.api_key)
    new_key = merchant_rotate_api_key(merchant=tm.merchant)
    with pytest.raises(Unauthorized):
        auth.merchant_for_api_key(tm.api_key)
    assert auth.merchant_for_api_key(new_key).pk == tm.merchant.pk


def test_unknown_prefixes_are_not_kept(settings):
    settings.API_KEY_CACHE_SECONDS = 60
    for i in range(5):
        with pytest.raises(Unauthorized):
            auth.merchant_for_api_key(f"gwk_unknownprefix{i:04d}xxxxxxxxxxxxxxxxxxxx")
    assert auth._recent == {}


def test_zero_reads_every_time(settings):
    settings.API_KEY_CACHE_SECONDS = 0
    tm = make_merchant()
    assert _statements(tm.api_key) == 1
    assert _statements(tm.api_key) == 1
