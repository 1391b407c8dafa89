"""Bring submissions into ``autograder/submitted/<student>/<assignment>/``, from a folder or an LMS zip.

Two sources, one result (the folder ``nbgrader autograde`` reads):

- a **folder** with one sub-folder per student (``ada/ps00-tokens.ipynb``, or
  ``ada/ps00-tokens/ps00-tokens.ipynb`` as nbgrader's exchange writes it): each student's files
  are copied as they are;
- an **LMS zip** (Canvas's "Download submissions"): handed to nbgrader's own ``zip_collect``
  (``nbgrader.apps.zipcollectapp``), which unpacks it into ``autograder/downloaded/<assignment>/``
  and maps each file name to a student with a regular expression. The default reads Canvas's names,
  ``<login>_[late_]<user id>_<submission id>_<file>[-<n>].ipynb``; ``regexp`` takes any other LMS's,
  with the named groups ``student_id`` and ``file_id`` that nbgrader's ``FileNameCollectorPlugin``
  asks for (matched against the file's whole path).

A student collected again replaces their earlier submission. Used by ``python -m bertlab_grader
collect`` (``make collect``).
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from bertlab_grader import layout
from bertlab_grader.nbgrader_course import nbgrader

#: Canvas: ``lovelaceada_12345_67890_ps00-tokens.ipynb``; ``_late_`` after the login if late, and
#: ``-1``, ``-2``, ... before ``.ipynb`` for a resubmission.
CANVAS = (
    r".*/(?P<student_id>[^/_]+)_(?:[lL][aA][tT][eE]_)?\d+_\d+_(?P<file_id>[^/]+?)(?:-\d+)?\.ipynb$"
)


class CollectError(ValueError):
    """The source is neither a folder of student folders nor a zip, or holds no submission."""


def _from_folder(course: Path, assignment: str, source: Path) -> list[str]:
    students = []
    for folder in sorted(p for p in source.iterdir() if p.is_dir() and not p.name.startswith(".")):
        files = folder / assignment if (folder / assignment).is_dir() else folder
        if not any(files.glob("*.ipynb")):
            continue
        dest = layout.submission(course, folder.name, assignment)
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(files, dest, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        students.append(folder.name)
    return students


def _from_zip(course: Path, assignment: str, source: Path, regexp: str) -> list[str]:
    if not zipfile.is_zipfile(source):
        raise CollectError(
            f"{source} is not a zip file: pass the LMS's zip of submissions, or a folder "
            f"with one folder per student"
        )
    archive = course / layout.DOWNLOADED / assignment / "archive"
    shutil.rmtree(archive.parent, ignore_errors=True)  # a fresh unpacking each time
    archive.mkdir(parents=True)
    shutil.copy(source, archive / source.name)
    before = {
        p.parent.parent.name: p.stat().st_mtime_ns
        for p in (course / layout.SUBMITTED).glob(f"*/{assignment}/*.ipynb")
    }
    nbgrader(
        course,
        "zip_collect",
        assignment,
        "--force",
        "--strict",
        f"--ZipCollectApp.downloaded_directory={layout.DOWNLOADED}",
        f"--FileNameCollectorPlugin.named_regexp={regexp}",
    )
    after = {
        p.parent.parent.name: p.stat().st_mtime_ns
        for p in (course / layout.SUBMITTED).glob(f"*/{assignment}/*.ipynb")
    }
    return sorted(s for s, stamp in after.items() if before.get(s) != stamp)


def collect(course: Path, assignment: str, source: Path, regexp: str = CANVAS) -> list[str]:
    """Copy every submission of ``assignment`` in ``source`` (a folder or an LMS zip) into the
    course's submitted folder; returns the students collected. Raises :class:`CollectError`."""
    course, source = Path(course).resolve(), Path(source).resolve()
    if not source.exists():
        raise CollectError(
            f"{source} does not exist: pass the LMS's zip of submissions, or a folder with "
            f"one folder per student"
        )
    if not (course / layout.RELEASE / assignment).is_dir():
        raise CollectError(
            f"{assignment} is not released in {course / layout.RELEASE}: release it first "
            f"(python -m bertlab_grader release {assignment})"
        )
    students = (
        _from_folder(course, assignment, source)
        if source.is_dir()
        else _from_zip(course, assignment, source, regexp)
    )
    if not students:
        how = (
            "no sub-folder holds a notebook"
            if source.is_dir()
            else "no file name matched the regular expression (Canvas's names by default; see --regexp)"
        )
        raise CollectError(f"no submission of {assignment} collected from {source}: {how}")
    return students
