"""The suite's whole journeys and concurrency tests, run unchanged through the deployment recipe:
two web nodes behind deploy/haproxy/haproxy.cfg (TLS ended there), two Celery workers and one
beat, all through deploy/pgbouncer/pgbouncer.ini in transaction mode (tests/deploy/conftest.py
swaps their server, client and worker fixtures for the cluster's).

Which ones, and why these: every test of tests/flows/ but the quick start (which is a newcomer's
single-process SQLite set-up, not a deployment): an S2S UPI payment paid, declined and expired,
each to its signed webhook, and refunds processed by a worker to their webhooks; and every
concurrency test that runs over real HTTP: twenty creations with one key or one merchantTxnId
(S2S idempotency) and refunds racing for one payment. The one concurrency test left out
replaces the acquirer inside the test's own process (a slow acquirer), which a separate node
cannot see. The fault run's subset is in test_two_node_faults.py."""
from __future__ import annotations

import urllib.request

from tests.flows.test_refund_webhooks import (  # noqa: F401
    receiver, test_refunds_are_processed_by_the_worker_and_their_webhooks_delivered)
from tests.flows.test_s2s_upi import (  # noqa: F401
    shop, test_failure_vpa_fails_at_once_and_the_merchant_gets_the_failed_webhook,
    test_success_vpa_pays_after_the_delay_and_the_merchant_gets_the_success_webhook,
    test_timeout_vpa_expires_at_the_sandbox_timeout_and_the_merchant_gets_the_expired_webhook)
from tests.payments.s2s.test_idempotency import (  # noqa: F401
    live_merchant, test_concurrent_requests_with_one_key_and_different_bodies_create_one_payment,
    test_twenty_concurrent_requests_with_one_key_create_one_payment_and_all_succeed,
    test_twenty_concurrent_requests_with_one_merchant_txn_id_create_one_payment)
from tests.refunds.test_concurrency import (  # noqa: F401
    test_concurrent_full_refunds_refund_the_payment_once, test_concurrent_repeats_of_one_refund_id_create_one_refund,
    test_ten_concurrent_refunds_never_exceed_the_paid_amount)


def test_requests_are_spread_over_both_nodes_through_tls_and_pgbouncer(cluster, transactional_db):
    for _ in range(8):
        with urllib.request.urlopen(cluster.url + "/readyz", timeout=10) as answer:
            assert answer.status == 200
    log = cluster.balancer.log_text()
    assert "web/web1 " in log and "web/web2 " in log, log[-2000:]
    assert cluster.bouncer.process.poll() is None


def test_workers_and_beat_run_at_their_units_lower_priority_and_the_web_nodes_at_the_usual(cluster):
    """deploy/systemd's Nice=: the sweeps and deliveries give way to requests on a shared host."""
    import os

    from tests.support.deploy import unit_nice

    assert (unit_nice("gateway-web.service"), unit_nice("gateway-worker.service"),
            unit_nice("gateway-beat.service")) == (None, 5, 5)
    assert {os.getpriority(os.PRIO_PROCESS, node.process.pid) for node in cluster.nodes} == {0}
    background = [worker.process.pid for worker in cluster.workers] + [cluster.beat.process.pid]
    assert {os.getpriority(os.PRIO_PROCESS, pid) for pid in background} == {5}
