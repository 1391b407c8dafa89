"""One shape for what grading a submission produced (``bertlab_grader.records.Outcome``): the
local grader's workers and the Dask tasks send the same record, and a record that crossed a
machine is checked before the gradebook's one writer trusts it."""

import pytest

from bertlab_grader import distributed
from bertlab_grader.records import Outcome, failed, place_graded


def a_record(**changes) -> dict:
    record = Outcome(
        "ada",
        True,
        1.5,
        timestamp="2026-12-06T10:00:00",
        notebooks={"ps00": {}},
        files={"ps00.ipynb": "{}"},
    ).to_json()
    return record | changes


def test_a_record_round_trips_through_json():
    assert Outcome.from_json(a_record()) == Outcome(**a_record())
    assert Outcome.from_json(a_record(seconds=2)).seconds == 2.0  # JSON writes 2.0 as 2


@pytest.mark.parametrize(
    "record",
    [
        "not a dict",
        a_record(extra=1),
        {k: v for k, v in a_record().items() if k != "files"},
        a_record(success="yes"),
        a_record(seconds=True),
        a_record(notebooks=[]),
        a_record(timestamp=3),
    ],
)
def test_a_malformed_record_is_refused(record):
    with pytest.raises(ValueError, match="grading record"):
        Outcome.from_json(record)


def test_a_task_result_is_checked_again_and_names_no_folder_here():
    outcome = distributed._outcome("ada", a_record(autograded="/home/instructor/secrets"))
    assert outcome.success and outcome.autograded == ""
    assert "no valid record" in distributed._outcome("ada", a_record(seconds="1")).error
    assert "record of 'bob'" in distributed._outcome("ada", a_record(student="bob")).error
    assert not distributed._outcome("ada", failed("ada", 0.0, "why").to_json()).success


def test_graded_notebooks_stay_in_the_students_folder(tmp_path):
    outcome = Outcome.from_json(a_record(files={"ps00.ipynb": "{}", "../../escape.ipynb": "{}"}))
    place_graded(tmp_path, "ps00", outcome)
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.ipynb"))
    assert written == ["autograder/autograded/ada/ps00/ps00.ipynb"]
