"""When beat sends each sweep: every so many seconds, at a fixed place in wall-clock time.

Celery's own interval schedule counts from when beat started, so every sweep of the schedule
falls on the same instants: each 30 s the payments sweep, the deliveries sweep, the rotation
gauge, the refunds and the reversals sweeps left beat within 20 ms, and on a node serving
payments the creations that came in the next 300 ms waited behind them (benchmarks/RESULTS.md,
"The sweeps in the tail"). `every(seconds, at=offset)` runs at `offset` seconds into each
period counted from the Unix epoch, so gateway.settings gives each sweep a half second of its
own (docs/decisions.md D26), whichever node's beat holds the lock and whenever it started.
"""
from __future__ import annotations

import math
from datetime import timedelta

from celery.schedules import schedstate, schedule


class every(schedule):  # noqa: N801 - named as Celery's own schedules are (crontab, solar)
    """Every `seconds`, at `at` seconds into each period of the wall clock: every(5, at=0.5)
    runs at :00.5, :05.5, :10.5 ... A slot missed while beat was down runs once, at once."""

    def __init__(self, seconds: float, *, at: float = 0.0, nowfun=None, app=None):
        if seconds <= 0 or not 0 <= at < seconds:
            raise ValueError(f"every({seconds}, at={at}): the offset must be within the period")
        self.at = float(at)
        super().__init__(run_every=seconds, nowfun=nowfun, app=app)

    def _next(self, last_run_at) -> tuple[bool, float]:
        """(whether a slot has come since `last_run_at`, seconds from now to the next slot)."""
        now = self.maybe_make_aware(self.now()).timestamp()
        slot = math.floor((now - self.at) / self.seconds) * self.seconds + self.at  # the latest, at or before now
        return self.maybe_make_aware(last_run_at).timestamp() < slot, slot + self.seconds - now

    def remaining_estimate(self, last_run_at) -> timedelta:
        due, to_next = self._next(last_run_at)
        return timedelta(0) if due else timedelta(seconds=to_next)

    def is_due(self, last_run_at) -> schedstate:
        due, to_next = self._next(last_run_at)
        return schedstate(is_due=due, next=to_next)

    def __eq__(self, other) -> bool:
        if isinstance(other, every):
            return (self.seconds, self.at) == (other.seconds, other.at)
        if isinstance(other, (int, float)):  # as Celery's schedule: equal to its period in seconds
            return self.seconds == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.seconds)

    def __reduce__(self):
        return _every, (self.seconds, self.at, self.nowfun)

    def __repr__(self) -> str:
        return f"<every {self.seconds:g} s at +{self.at:g} s>"


def _every(seconds: float, at: float, nowfun=None) -> every:
    return every(seconds, at=at, nowfun=nowfun)
