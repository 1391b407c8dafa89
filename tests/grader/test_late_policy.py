"""The late policy (nbgrader's late-submission plugin, :mod:`bertlab_grader.late_policy`) and the
reading of due dates and extensions (:mod:`bertlab_grader.deadlines`), without a gradebook; the
commands that use them are tested in ``test_class_rules.py``."""

from datetime import datetime

import pytest
from traitlets import TraitError
from traitlets.config import Config

from bertlab_grader import layout
from bertlab_grader.deadlines import DeadlineError, Deadlines
from bertlab_grader.late_policy import LatePolicy

HOUR, DAY = 3600, 24 * 3600


def policy(**settings) -> LatePolicy:
    config = Config()
    for name, value in settings.items():
        setattr(config.LatePolicy, name, value)
    return LatePolicy(config=config)


def test_per_day_takes_a_share_for_each_day_or_part_of_one_down_to_the_floor():
    per_day = policy(penalty_method="per_day", share_per_day=0.1, floor=0.7, grace_minutes=15)
    assert per_day.late_submission_penalty("ada", 10, 10 * 60) is None, "within the grace"
    assert per_day.late_submission_penalty("ada", 10, 16 * 60) == 1.0, "past it: a whole day"
    assert per_day.late_submission_penalty("ada", 10, DAY) == 1.0
    assert per_day.late_submission_penalty("ada", 10, DAY + 1) == 2.0, "a part of a day counts"
    assert per_day.late_submission_penalty("ada", 10, 30 * DAY) == 3.0, "the floor keeps 70%"
    assert policy(penalty_method="per_day").late_submission_penalty("ada", 10, 30 * DAY) == 10


def test_nbgraders_own_methods_keep_their_meaning_and_the_grace():
    assert policy().late_submission_penalty("ada", 10, 5 * DAY) is None
    assert policy(penalty_method="zero").late_submission_penalty("ada", 10, HOUR) == 10
    zero = policy(penalty_method="zero", grace_minutes=90)
    assert zero.late_submission_penalty("ada", 10, HOUR) is None


def test_the_policy_says_itself_in_a_sentence():
    said = policy(penalty_method="per_day", share_per_day=0.2, floor=0.4, grace_minutes=5)
    assert said.describe() == (
        "Late work loses 20% of its score for each day or part of a day late, never more than "
        "60% in all. A submission up to 5 minutes late is on time."
    )
    assert policy().describe() == "Late work is accepted without a penalty."


@pytest.mark.parametrize(
    "setting", [{"share_per_day": 1.5}, {"floor": -0.1}, {"grace_minutes": -1}]
)
def test_a_setting_out_of_range_is_refused(setting):
    with pytest.raises(TraitError, match="LatePolicy"):
        policy(**setting)


def test_due_dates_are_read_in_the_courses_time_zone_and_kept_in_utc():
    deadlines = Deadlines(
        due_dates={"a": "2027-07-01 17:00", "b": "2027-07-01T17:00+02:00"}, timezone="Europe/Paris"
    )
    assert deadlines.due("a") == datetime(2027, 7, 1, 15, 0), "Paris is UTC+2 in July"
    assert deadlines.due("b") == datetime(2027, 7, 1, 15, 0)
    assert deadlines.due("c") is None
    assert (
        deadlines.local(datetime(2027, 7, 1, 15, 0))
        == "Thursday 01 July 2027, 17:00 (Europe/Paris)"
    )
    with pytest.raises(DeadlineError, match="not a date"):
        Deadlines(due_dates={"a": "next Friday"}).due("a")
    with pytest.raises(DeadlineError, match="not an IANA time zone"):
        Deadlines(due_dates={"a": "2027-07-01"}, timezone="Mars/Olympus").due("a")


def test_extensions_are_read_from_the_instructors_csv(tmp_path):
    deadlines = Deadlines(timezone="UTC")
    assert deadlines.extensions(tmp_path) == {}, "no file, no extensions"
    path = tmp_path / layout.EXTENSIONS
    path.parent.mkdir(parents=True)
    path.write_text("student,assignment,due\nada,ps04-mlm,2027-03-01 09:00\n,,\n")
    assert deadlines.extensions(tmp_path) == {("ada", "ps04-mlm"): datetime(2027, 3, 1, 9, 0)}
    path.write_text("student,assignment,due\nada,ps04-mlm,soon\n")
    with pytest.raises(DeadlineError, match="line 2"):
        deadlines.extensions(tmp_path)
    path.write_text("name,when\nada,2027-03-01\n")
    with pytest.raises(DeadlineError, match="student,assignment,due"):
        deadlines.extensions(tmp_path)
