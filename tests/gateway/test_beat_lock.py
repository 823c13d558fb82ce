"""Two schedulers: the second `celery -A gateway beat` sends nothing while the first holds the beat
lock, and takes over when the first ends, cleanly or killed (gateway/core/beatlock.py). Real beat
processes on a Redis of the test's own."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from gateway.core.beatlock import LOCK_KEY, BeatLock
from tests.support.spare_redis import SpareRedis
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
SENT = "Sending due task"


class Beat:
    def __init__(self, name: str, redis_url: str, folder: Path, **env):
        self.log = folder / f"{name}.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "gateway", "beat", "--loglevel", "INFO",
                 "--schedule", str(folder / f"{name}-schedule")],
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                env={**os.environ, "REDIS_URL": redis_url, "PYTHONUNBUFFERED": "1", **env})

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def sent(self) -> int:
        return self.text().count(SENT)

    def stop(self, sig=signal.SIGTERM) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)
            self.process.wait(timeout=20)


@pytest.fixture
def redis_url():
    redis = SpareRedis().start()
    yield redis.url
    redis.stop()


@pytest.fixture
def beats(redis_url, tmp_path):
    started = []

    def start(name, **env):
        started.append(Beat(name, redis_url, tmp_path, **env))
        return started[-1]

    yield start
    for beat in started:
        beat.stop(signal.SIGKILL)


def test_a_second_beat_sends_nothing_while_the_first_runs_and_takes_over_when_it_stops(beats):
    first = beats("first")
    wait_until(lambda: first.sent() >= 2, 60, lambda: "the first beat sent nothing:\n" + first.text())
    second = beats("second")
    wait_until(lambda: "stands by" in second.text(), 60, lambda: "the second beat did not stand by:\n" + second.text())
    # The schedule sends the payments sweep every second: a few more of the first's sends, and
    # still none of the second's.
    seen = first.sent()
    wait_until(lambda: first.sent() >= seen + 3, 30, lambda: first.text())
    assert second.sent() == 0, second.text()

    first.stop()  # a clean stop gives the lock back
    wait_until(lambda: second.sent() >= 1, 30, lambda: "the standby never took over:\n" + second.text())
    assert "beat lock taken" in second.text()


def test_a_killed_beats_lock_ends_with_its_lifetime_and_the_standby_takes_over(beats):
    first = beats("first", BEAT_LOCK_SECONDS="3")
    wait_until(lambda: first.sent() >= 1, 60, lambda: first.text())
    second = beats("second", BEAT_LOCK_SECONDS="3")
    wait_until(lambda: "stands by" in second.text(), 60, lambda: second.text())
    first.stop(signal.SIGKILL)  # no goodbye: the lock stays until its 3 s are up
    wait_until(lambda: second.sent() >= 1, 30, lambda: "the standby never took over:\n" + second.text())


def test_the_lock_is_renewed_by_its_holder_and_refused_to_another(redis_url):
    mine, theirs = BeatLock(redis_url, 5, holder="mine"), BeatLock(redis_url, 5, holder="theirs")
    assert mine.hold() and mine.hold()
    assert not theirs.hold() and theirs.holder_now() == "mine"
    theirs.release()  # not theirs to give back
    assert mine.holder_now() == "mine"
    mine.release()
    assert theirs.hold() and theirs.holder_now() == "theirs"
    assert mine._client.pttl(LOCK_KEY) > 4000


@pytest.mark.parametrize("value", ["1", "301", "soon"])
def test_a_beat_lock_lifetime_out_of_range_is_refused_at_start(value):
    result = subprocess.run([sys.executable, "-c", "import gateway.settings"], cwd=ROOT, capture_output=True,
                            text=True, timeout=60, env={**os.environ, "BEAT_LOCK_SECONDS": value})
    assert result.returncode != 0 and "BEAT_LOCK_SECONDS" in result.stderr
