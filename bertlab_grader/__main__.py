"""``python -m bertlab_grader COMMAND ...``: the instructor's grader, one command per step.

Run from the course root (or pass ``--course``); the folders are those of
:mod:`bertlab_grader.layout`. The ``make`` targets of the same names call these.

    release ASSIGNMENT...           the student version into exercises/, the hidden tests into the gradebook
    publish ASSIGNMENT              the student version into nbgrader's exchange (the class's hub)
    collect ASSIGNMENT SOURCE       submissions from a folder (one folder per student) or an LMS zip;
                                    SOURCE ``exchange``: each student's latest from the exchange
    autograde ASSIGNMENT            grade in parallel (--workers N, --student S, --force), then report;
                                    --scheduler ADDRESS grades on a Dask cluster instead
    regrade ASSIGNMENT              grade again even if unchanged (everyone, or --student S)
    feedback ASSIGNMENT             HTML feedback, hidden tests removed (everyone, or --student S);
                                    into the exchange too if the assignment was published there
    export [ASSIGNMENT...]          per-question and total scores as CSV (late penalties, written answers)
    similarity ASSIGNMENT           every student's answers against every other's and the public
                                    reference code: an HTML report of the closest pairs, and a CSV
    doctor                          what a grading kernel here can read, write, reach and use

``autograde`` prints one row per student (score, seconds, what needs a look), writes it to
``autograder/reports/ASSIGNMENT.csv`` and ``.json``, and exits 1 naming every student whose
submission needs a look. Every command exits 2, saying what to do, when its input is missing.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bertlab_grader import layout
from bertlab_grader.nbgrader_course import nbgrader_api


class Refused(Exception):
    """A command cannot start: the message says what to do (exit status 2, as for a
    FileNotFoundError: no course root, no such student)."""


def _checked(result: dict, what: str) -> None:
    if not result.get("success"):
        raise RuntimeError(
            f"{what} failed:\n{result.get('error') or ''}\n{result.get('log') or ''}"
        )


def _released(course: Path, assignment: str) -> None:
    """The gradebook must know the assignment's cells (from its release) before grading it."""
    from nbgrader.api import Gradebook, MissingEntry

    url = layout.gradebook_url(course)
    file = layout.sqlite_file(url)
    try:
        if file is not None and not file.is_file():
            raise MissingEntry()
        with Gradebook(url) as gradebook:
            if not gradebook.find_assignment(assignment).notebooks:
                raise MissingEntry()
    except MissingEntry:
        raise Refused(
            f"the gradebook does not know {assignment}'s tests yet: release it first "
            f"(python -m bertlab_grader release {assignment}, or make release ASSIGNMENT={assignment})"
        )


def release(args) -> int:
    api = nbgrader_api(args.course)
    known = layout.assignments(args.course)
    for assignment in args.assignment or known:
        if assignment not in known:
            raise Refused(
                f"no assignment {assignment!r} in {args.course / layout.SOURCE}: one of {', '.join(known)}"
            )
        _checked(api.generate_assignment(assignment, force=True), f"releasing {assignment}")
        print(
            f"released {assignment}: {layout.RELEASE}/{assignment}/ (its hidden tests are in the gradebook)"
            + _due_said(args.course, assignment)
        )
    return 0


def _due_said(course: Path, assignment: str) -> str:
    """'; due ...' where the course's config gives the assignment a due date."""
    from bertlab_grader.deadlines import DeadlineError, course_deadlines

    try:
        deadlines, _ = course_deadlines(course)
        due = deadlines.due(assignment)
    except DeadlineError as exc:
        raise Refused(str(exc))
    return "" if due is None else f"; due {deadlines.local(due)}"


def _apply_deadlines(course: Path, assignment: str) -> None:
    """The due date and the extensions into the gradebook, and every late penalty charged again."""
    from bertlab_grader.deadlines import DeadlineError, apply

    try:
        apply(course, assignment)
    except DeadlineError as exc:
        raise Refused(str(exc))


def publish(args) -> int:
    from bertlab_grader import exchange

    _released(args.course, args.assignment)
    try:
        where = exchange.publish(args.course, args.assignment)
    except exchange.ExchangeError as exc:
        raise Refused(str(exc))
    print(f"published {args.assignment}: students fetch it in the Assignments tab ({where})")
    return 0


def collect(args) -> int:
    from bertlab_grader.collect import CANVAS, CollectError, collect as run

    if str(args.source) == "exchange":
        from bertlab_grader import exchange

        try:
            got = exchange.collect(args.course, args.assignment)
        except exchange.ExchangeError as exc:
            raise Refused(str(exc))
        print(
            f"collected {len(got.students)} new submission(s) of {args.assignment} from the exchange into "
            f"{layout.SUBMITTED}/: "
            + ", ".join(s + (f" ({got.late[s]})" if s in got.late else "") for s in got.students)
        )
        return 0
    try:
        students = run(args.course, args.assignment, args.source, args.regexp or CANVAS)
    except CollectError as exc:
        raise Refused(str(exc))
    from bertlab_grader.deadlines import late_by

    late = late_by(args.course, args.assignment, students)
    print(
        f"collected {len(students)} submission(s) of {args.assignment} into {layout.SUBMITTED}/: "
        + ", ".join(s + (f" ({late[s]})" if s in late else "") for s in students)
    )
    return 0


def _sandbox_said(course: Path) -> str:
    """One line: is the sandbox on, and which caps are hard (the report says which is in force).
    Refused, before any kernel starts, where the sandbox is on but cannot be built here."""
    from bertlab_grader.doctor import course_settings
    from bertlab_grader.sandbox.limits import hard_caps
    from bertlab_grader.sandbox.manager import unsandboxed_refusal

    mode = course_settings(course).mode
    refusal = unsandboxed_refusal(mode)
    if refusal:
        raise Refused(refusal)
    return f"sandbox: {'NOT sandboxed (Sandbox.mode=off)' if mode == 'off' else 'on'}; caps: {hard_caps()}"


def autograde(args) -> int:
    from bertlab_grader import grade_report, parallel

    course, assignment = args.course, args.assignment
    _released(course, assignment)
    print(_sandbox_said(course), flush=True)
    if not any((course / layout.SUBMITTED).glob(f"*/{assignment}")):
        raise Refused(
            f"no submissions: put them in {course / layout.SUBMITTED}/<student>/{assignment}/ "
            f"(python -m bertlab_grader collect {assignment} FOLDER_OR_ZIP)"
        )
    if args.scheduler:
        from bertlab_grader import distributed

        graded = distributed.autograde(course, assignment, args.scheduler, args.student, args.force)
    else:
        graded = parallel.autograde(course, assignment, args.workers, args.student, args.force)
    outcomes = {o.student: o for o in graded}
    _apply_deadlines(course, assignment)
    if not outcomes:
        print(
            "every submission is graded and unchanged since (regrade, or --force, grades them again)"
        )
    rows = grade_report.report(course, assignment)
    if args.student:
        rows = [r for r in rows if r["student"] in args.student]
    for row in rows:
        outcome = outcomes.get(row["student"])
        row["seconds"] = round(outcome.seconds, 1) if outcome else None
        if outcome and not outcome.success:
            last = outcome.error.strip().splitlines()[-1:] or ["nbgrader could not grade it"]
            row["flags"] = "; ".join(filter(None, [row["flags"], f"not graded: {last[0][:200]}"]))
    width = max([len(r["student"]) for r in rows] + [7])
    for r in rows:
        score = "-" if r["score"] is None else f"{r['score']:g}"
        seconds = "" if r["seconds"] is None else f"{r['seconds']:6.1f} s"
        rules = [
            f"late: -{r['late_penalty']:g}" if r.get("late_penalty") else "",
            f"{r['to_grade_by_hand']} to grade by hand" if r.get("to_grade_by_hand") else "",
        ]
        print(
            f"{r['student']:<{width}}  {score:>5} / {r['max_score']:g}  {seconds:>8}  "
            + "  ".join(filter(None, [*rules, r["flags"]]))
        )
    waiting = sum(r.get("to_grade_by_hand") or 0 for r in rows)
    if waiting:
        print(
            f"{waiting} written answer(s) wait for a human: make formgrade "
            "(docs/instructors.md, 'Grading written answers')"
        )
    paths = grade_report.write(rows, course / layout.REPORTS, assignment)
    print("written:", ", ".join(str(p.relative_to(course)) for p in paths))
    look = [r["student"] for r in rows if r["flags"]]
    if look:
        print(f"{len(look)} to look at: {', '.join(look)}", file=sys.stderr)
    return 1 if look else 0


def regrade(args) -> int:
    args.force = True
    return autograde(args)


def feedback(args) -> int:
    _released(args.course, args.assignment)
    _apply_deadlines(args.course, args.assignment)  # extensions and manual grades given since
    api = nbgrader_api(args.course)
    for student in args.student or [None]:
        _checked(
            api.generate_feedback(args.assignment, student, force=True),
            f"feedback for {args.assignment}" + (f" ({student})" if student else ""),
        )
    print(f"feedback (HTML, hidden tests removed): {layout.FEEDBACK}/<student>/{args.assignment}/")
    from bertlab_grader import exchange

    if exchange.is_published(args.course, args.assignment):
        released = exchange.release_feedback(args.course, args.assignment, args.student)
        print(
            f"feedback released to the exchange (each student's Assignments tab): {', '.join(released)}"
        )
    return 0


def export(args) -> int:
    from bertlab_grader.export import export as run

    file = layout.sqlite_file(layout.gradebook_url(args.course))
    if file is not None and not file.is_file():
        raise Refused(f"no gradebook at {file}: release and autograde an assignment first")
    from bertlab_grader.deadlines import DeadlineError

    try:
        written = run(args.course, args.assignment or None)
    except DeadlineError as exc:
        raise Refused(str(exc))
    for path in written:
        print(
            "written:", path.relative_to(args.course) if path.is_relative_to(args.course) else path
        )
    return 0


def doctor(args) -> int:
    from bertlab_grader.doctor import doctor as check

    return check(args.course)


def similarity(args) -> int:
    from bertlab_grader import similarity as check

    try:
        found = check.report(args.course, args.assignment, threshold=args.threshold)
    except check.SimilarityError as exc:
        raise Refused(str(exc))
    from bertlab_grader.similarity_report import summary

    for line in summary(found, args.course):
        print(line)
    return 0


COMMANDS = {
    "release": release,
    "publish": publish,
    "collect": collect,
    "autograde": autograde,
    "regrade": regrade,
    "feedback": feedback,
    "export": export,
    "similarity": similarity,
    "doctor": doctor,
}


def main(argv: list[str] | None = None) -> int:
    from bertlab_grader import unused_imports  # here, not at the top: importing it leaves them out

    unused_imports.leave_out()
    from bertlab_grader.arguments import parser

    args = parser().parse_args(argv)
    args.course = args.course.resolve()
    try:
        return COMMANDS[args.command](args)
    except (Refused, FileNotFoundError) as exc:  # a missing course root, student or file
        print(f"python -m bertlab_grader {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
