import pytest

from tests.support.factories import make_merchant
from tests.support.receiver import Receiver


@pytest.fixture
def receiver():
    with Receiver() as r:
        yield r


@pytest.fixture
def hooked(receiver, db):
    """A merchant whose webhook address is the loopback receiver."""
    return make_merchant(webhook_url=receiver.url("/hooks/gateway"))
