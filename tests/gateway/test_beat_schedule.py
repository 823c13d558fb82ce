import pickle
from datetime import datetime, timedelta, timezone

import pytest
from django.conf import settings

from gateway.celery import app
from gateway.core.phases import every


def test_every_beat_entry_names_a_registered_task():
    """A misspelt task name in the schedule would silently switch off a safety-net sweep."""
    app.loader.import_default_modules()
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert scheduled - set(app.tasks) == set()
    assert {"webhooks.tasks.deliveries_due_sweep", "payments.tasks.payments_expire_sweep",
            "refunds.tasks.refunds_pending_sweep", "tokens.tasks.card_consents_purge_task",
            "webhooks.tasks.previous_webhook_secrets_forget"} <= scheduled


def test_payments_expire_within_about_a_second_of_their_deadline():
    """The sweep is the only thing that expires an unattended payment (payments.services.expiry);
    docs/hosted-checkout.md and docs/s2s.md promise about a second."""
    entry = settings.CELERY_BEAT_SCHEDULE["payments-expire"]
    assert entry["task"] == "payments.tasks.payments_expire_sweep" and entry["schedule"].seconds <= 1.0


def test_no_two_sweeps_leave_beat_in_the_same_half_second():
    """Each 30 s five sweeps left beat within 20 ms, and the payments created in the next 300 ms
    waited behind them on a two-core node (benchmarks/RESULTS.md). Over an hour, every sweep but
    the payments sweep has half seconds of its own, and none falls on the payments sweep's."""
    taken: dict[float, list[str]] = {}
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        when = entry["schedule"]
        assert isinstance(when, every), f"{name} runs from beat's start, not at a place of its own"
        for k in range(round(3600 / when.seconds)):
            taken.setdefault(round((when.at + k * when.seconds) % 3600, 3), []).append(name)
    shared = {t: names for t, names in taken.items() if len(names) > 1}
    assert shared == {}


def _at(seconds: float) -> datetime:
    return datetime(2026, 11, 29, 1, 0, tzinfo=timezone.utc) + timedelta(seconds=seconds)


def _every(period, at, now):
    return every(period, at=at, nowfun=lambda: _at(now))


def test_every_runs_at_its_offset_into_each_period_of_the_wall_clock():
    # Beat started at :01.2 and the sweep ran then: the next run is at :05.5, not at :06.2.
    assert _every(5, 0.5, now=1.2).is_due(_at(1.2)) == (False, pytest.approx(4.3))
    assert _every(5, 0.5, now=5.49).is_due(_at(1.2)) == (False, pytest.approx(0.01))
    # At the slot it is due, and the next look is the next slot's distance, not a whole period.
    assert _every(5, 0.5, now=5.5).is_due(_at(1.2)) == (True, pytest.approx(5.0))
    assert _every(5, 0.5, now=5.7).is_due(_at(1.2)) == (True, pytest.approx(4.8))
    # Run at :05.7, it waits for :10.5.
    assert _every(5, 0.5, now=5.8).is_due(_at(5.7)) == (False, pytest.approx(4.7))


def test_slots_missed_while_beat_was_down_run_once_at_once():
    assert _every(5, 0.5, now=60).is_due(_at(1.2)) == (True, pytest.approx(0.5))
    assert _every(5, 0.5, now=60.1).is_due(_at(60)) == (False, pytest.approx(0.4))


def test_every_survives_the_schedule_file_and_refuses_an_offset_outside_its_period():
    when = every(30, at=17.5)
    assert pickle.loads(pickle.dumps(when)) == when
    assert when == 30 and when != every(30, at=7.5)  # a number compares with its period, as in Celery
    with pytest.raises(ValueError):
        every(5, at=5)
    with pytest.raises(ValueError):
        every(0)
