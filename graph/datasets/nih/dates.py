"""Synthetic study dates for NIH ChestX-ray14: NIH gives each patient's follow-up order, never a date.

``StudyDateTime`` = 2000-01-01 00:00:00 + 91 days x ``Follow-up #`` (Data_Entry_2017_v2020), so the order
of a patient's studies is NIH's and nothing else is (:data:`SYNTHETIC_DATES_NOTE`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache

SYNTHETIC_EPOCH = datetime(2000, 1, 1)
DAYS_PER_FOLLOW_UP = 91
DATETIME_FORMAT = "%Y-%m-%d %H:%M:%S"
#: What every place that shows NIH study dates must be able to say.
SYNTHETIC_DATES_NOTE = "dates are synthetic (2000-01-01 + 91 days per follow-up); only their order is NIH's"


def synthetic_study_datetime(follow_up: int) -> datetime:
    """The synthetic study datetime of NIH follow-up number ``follow_up`` (0-based, as in Data_Entry).

    2000-01-01 00:00:00 + 91 days per follow-up: roughly four follow-ups per calendar year, order kept.
    Only the order is NIH's (:data:`SYNTHETIC_DATES_NOTE`).

    Raises:
        ValueError: ``follow_up`` is negative.
    """
    if follow_up < 0:
        raise ValueError(f"follow-up number {follow_up} is negative")
    return SYNTHETIC_EPOCH + timedelta(days=DAYS_PER_FOLLOW_UP * int(follow_up))


@lru_cache(maxsize=512)
def study_date_fields(follow_up: int) -> tuple[str, int]:
    """(``StudyDateTime`` text ``"2000-04-01 00:00:00"``, metadata ``StudyDate`` int ``20000401``) of a
    follow-up number. Raises ValueError for a negative one."""
    when = synthetic_study_datetime(follow_up)
    return when.strftime(DATETIME_FORMAT), int(when.strftime("%Y%m%d"))
