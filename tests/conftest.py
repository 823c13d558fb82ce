import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from tests.support.factories import make_merchant


@pytest.fixture(autouse=True)
def _clear_cache():
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
