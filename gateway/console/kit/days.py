"""Console dates are calendar days in settings.TIME_ZONE (Asia/Kolkata): a day runs from
00:00 IST to the next 00:00 IST, which is 18:30 UTC the evening before to 18:30 UTC."""
from __future__ import annotations

from datetime import date, datetime, time, timedelta

from django.utils import timezone


def day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=timezone.get_default_timezone())


def day_bounds(first: date, last: date | None = None) -> tuple[datetime, datetime]:
    """[00:00 of `first`, 00:00 of the day after `last`) as aware datetimes."""
    return day_start(first), day_start((last or first) + timedelta(days=1))


def today() -> date:
    return timezone.localdate(timezone=timezone.get_default_timezone())


def local(moment: datetime | None) -> datetime | None:
    return timezone.localtime(moment, timezone.get_default_timezone()) if moment else None
