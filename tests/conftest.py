import pytest
from django.core.servers.basehttp import WSGIServer
from django.core.cache import cache
from rest_framework.test import APIClient

from tests.support.factories import make_merchant

# Django's development server listens with a backlog of 10: the 11th simultaneous connection
# waits a second for TCP to retry its SYN, which would hide what the concurrency tests measure.
# gunicorn listens with 2048; give every live test server a backlog like a real one.
WSGIServer.request_queue_size = max(WSGIServer.request_queue_size, 128)


@pytest.fixture(autouse=True)
def _clear_cache():
    from gateway.core import redisguard

    redisguard.reset()  # an outage a test made is not the next test's
    cache.clear()
    yield


@pytest.fixture
def api():
    return APIClient()


@pytest.fixture
def merchant(db):
    return make_merchant(code="ACME")


@pytest.fixture
def other_merchant(db):
    return make_merchant(code="OTHER")
