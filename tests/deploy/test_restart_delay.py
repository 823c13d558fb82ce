"""The harness restarts a process that exits by itself as its own systemd unit does: after that
unit's RestartSec, not one delay for every unit (beat's unit waits 5 s, web's and worker's 2 s)."""
from __future__ import annotations

import time

from tests.support.deploy import Process
from tests.support.waiting import wait_until
from tests.support.worker import unit_restart_seconds


def test_each_unit_is_restarted_after_its_own_restart_delay(tmp_path):
    assert (unit_restart_seconds("gateway-web.service"), unit_restart_seconds("gateway-worker.service"),
            unit_restart_seconds("gateway-beat.service")) == (2, 2, 5)
    beat = Process("beat", ["sh", "-c", "exit 0"], {}, tmp_path, unit="gateway-beat.service").start()
    try:
        time.sleep(3.5)  # past web's and worker's delay, within beat's
        assert (beat.runs, beat.restarts) == (1, 0)
        assert wait_until(lambda: beat.restarts == 1, 5, "beat was not started again after its unit's RestartSec")
    finally:
        beat.stop()
