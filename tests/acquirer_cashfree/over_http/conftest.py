"""The Cashfree tests whose double sends its webhooks over real HTTP to this test's live server
(the acquirer's inbound door): one `cashfree` for them all, the double with its webhook address
set, in place of the Prism client the folder above names `cashfree`."""
import pytest

from tests.acquirer_cashfree.double import cashfree_double  # noqa: F401 (a fixture)
from tests.support.factories import make_merchant


@pytest.fixture
def shop():
    return make_merchant(code="CFSHOP")


@pytest.fixture
def cashfree(cashfree_double, live_server):  # noqa: F811
    cashfree_double.webhook_url = f"{live_server.url}/acquirer/cashfree/webhooks"
    return cashfree_double
