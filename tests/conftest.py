import os
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from django.core.servers.basehttp import WSGIServer
from django.core.cache import cache
from rest_framework.test import APIClient

from tests.support.factories import make_merchant

# Hypothesis times each example (200 ms) and refuses slow data generation by default: timings
# are not behaviour (speed lives in benchmarks/), and on a loaded CI machine they fail tests whose
# properties hold. Every property test of the suite runs without them.
hypothesis_settings.register_profile("gateway", deadline=None,
                                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
hypothesis_settings.load_profile("gateway")

# Django's development server listens with a backlog of 10: the 11th simultaneous connection
# waits a second for TCP to retry its SYN, which would hide what the concurrency tests measure.
# gunicorn listens with 2048; give every live test server a backlog like a real one.
WSGIServer.request_queue_size = max(WSGIServer.request_queue_size, 128)


def _flush_retrying_deadlocks(flush):
    """A transactional test ends by emptying every table (TRUNCATE, one table's lock after
    another). A real Celery worker with beat, kept for a whole module, may be reading those
    tables in another order at that moment, and PostgreSQL breaks the deadlock by cancelling
    the flush. The flush is then simply run again, as the worker's sweep holds nothing long."""

    def teardown(self):
        from django.db import OperationalError

        for attempt in range(5):
            try:
                return flush(self)
            except Exception as exc:  # CommandError wraps the OperationalError
                cause = exc.__cause__ or exc
                if attempt == 4 or not isinstance(cause, OperationalError) or "deadlock" not in str(cause):
                    raise
                time.sleep(0.2)

    return teardown


# Nothing in the project may read a file beside the repository (a lone clone has nothing there).
# Every file this test process opens under the repository's parent folder must be inside the
# repository; CI runs the suite from a copy with nothing beside it as well (.ci/run).
_ROOT = Path(__file__).resolve().parents[1]
_BESIDE = str(_ROOT.parent) + os.sep
_INSIDE = str(_ROOT) + os.sep
_outside_reads: list[str] = []


def _watch_opens(event, args):
    if event != "open" or not args or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    path = os.fsdecode(args[0])
    if not os.path.isabs(path):
        return
    if path.startswith(_BESIDE) and not path.startswith(_INSIDE) and path + os.sep != _INSIDE:
        _outside_reads.append(path)


sys.addaudithook(_watch_opens)


@pytest.fixture(scope="session", autouse=True)
def _nothing_read_beside_the_repository():
    # Checked as the session's last teardown, an error of the run's last test: under pytest-xdist
    # each worker process keeps its own list, and only a test's report reaches the controller.
    yield
    if _outside_reads:
        pytest.fail(f"files beside the repository were opened (a lone clone has none): {sorted(set(_outside_reads))[:10]}")


# A payment's refund totals are its own columns (Payment.refunded_amount,
# Payment.refund_pending_amount), moved by refunds as each refund starts and ends. After every
# test that used the database, and passed, they must equal the sums of the payment's refunds
# (refunds.selectors states the rule): a write of a refund that forgot them fails here, in any
# area, the test that made it. Tests make refunds through the services or
# tests.support.factories.make_refund, which keep the totals.
_DATABASE_FIXTURES = {"db", "transactional_db", "_django_db_helper", "live_server"}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield  # a failing test raises here, and is not checked
    if item.get_closest_marker("django_db") or _DATABASE_FIXTURES & set(item.fixturenames):
        from refunds.selectors import payments_with_refund_totals_off

        off = payments_with_refund_totals_off()
        assert not off, ("payments whose refund totals are not the sums of their refunds "
                         f"(pk, refunded, pending, sum of SUCCESS, sum of INITIATED): {off[:5]}")
    return result


def pytest_runtest_setup(item):
    # The two-node harness's beat and workers sweep the test database: running beside a test of
    # another folder they expire its payments and deliver its webhooks before it looks.
    if "tests/deploy/" not in item.nodeid:
        from tests.support.deploy import Cluster

        assert not Cluster.running, (f"a two-node cluster outlived tests/deploy and would sweep {item.nodeid}'s "
                                     "rows: its fixture must end with its folder")


def pytest_configure(config):
    from django.test import TransactionTestCase

    TransactionTestCase._fixture_teardown = _flush_retrying_deadlocks(TransactionTestCase._fixture_teardown)


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


# The files whose tests take minutes, started first: pytest-xdist hands out files in collection
# order (scripts/test: two workers, --dist loadfile), and one started last runs on alone while the
# other worker idles (the 60-day dispute simulation did for 12 minutes). Their order among
# themselves, and every other file's, is unchanged.
LONG_FILES = (
    "tests/refunds/test_dispute_deadlines_simulation.py",
    "tests/flows/test_quickstart.py",
    "tests/benchmarks/test_failover_run.py",
    "tests/docs/test_readme_deployment.py",
    "tests/flows/test_quickstart_rerun.py",
    "tests/gateway/test_redis_outage.py",
    "tests/deploy/test_two_node_faults.py",
)


def pytest_collection_modifyitems(config, items):
    def long_first(item):
        path = item.nodeid.split("::", 1)[0]
        return LONG_FILES.index(path) if path in LONG_FILES else len(LONG_FILES)

    items.sort(key=long_first)  # a stable sort: only the long files move
