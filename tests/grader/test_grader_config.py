"""The grader's own settings: one call a course makes (``bertlab_grader.config.configure``), and
the sandbox's settings whose defaults environment variables give (docs/instructors.md, "The
grader's settings"). No kernel starts here."""

import ast
from pathlib import Path

import pytest
from nbgrader.preprocessors import DeduplicateIds, Execute
from traitlets import TraitError
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from bertlab_grader.sandbox import limits as kernel_limits
from bertlab_grader.config import configure
from bertlab_grader.guarded_execute import GuardedExecute
from bertlab_grader.pasted_cells import DropDuplicateIds
from bertlab_grader.sandbox import bwrap
from bertlab_grader.sandbox.settings import Sandbox
from bertlab_grader.sandbox.warm import pool

REPO = Path(__file__).resolve().parents[2]
GRADER = REPO / "bertlab_grader"
COURSES = {"course": REPO, "test course": REPO / "tests" / "grader_course"}
# What differs between two courses by nature: where each lives and what it is called.
OWN = {("CourseDirectory", "root"), ("CourseDirectory", "course_id"), ("CourseDirectory", "db_url")}


def course_config(root: Path) -> Config:
    return PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()


def grader_settings(config: Config) -> dict:
    """Every value ``configure`` sets, as the given config holds it."""
    return {
        (section, name): config[section][name]
        for section, name in _configured()
        if (section, name) not in OWN
    }


def _configured() -> list[tuple[str, str]]:
    plain = configure(Config(), "/nowhere", "x")
    return [(section, name) for section in plain for name in plain[section]]


def test_configure_puts_the_guarded_preprocessors_in_nbgrader_s_pipeline(tmp_path):
    c = configure(Config(), tmp_path, "demo")
    autograde, sanitize = c.Autograde.autograde_preprocessors, c.Autograde.sanitize_preprocessors
    assert GuardedExecute in autograde and Execute not in autograde
    assert DropDuplicateIds in sanitize and DeduplicateIds not in sanitize
    assert "bertlab_grader.feedback_redaction.RedactHiddenTests" in c.GenerateFeedback.preprocessors
    assert c.Execute.extra_arguments[0] == "--InteractiveShell.xmode=Minimal"
    assert c.CourseDirectory.root == str(tmp_path) and c.CourseDirectory.course_id == "demo"
    assert c.CourseDirectory.db_url == "sqlite:///" + str(
        tmp_path.resolve() / "autograder" / "gradebook.db"
    )


def test_the_course_and_the_test_course_grade_with_the_same_settings(monkeypatch):
    monkeypatch.delenv("BERTLAB_GRADEBOOK_URL", raising=False)
    course, test_course = (grader_settings(course_config(root)) for root in COURSES.values())
    assert course == test_course == grader_settings(configure(Config(), "/nowhere", "x"))
    for name, root in COURSES.items():
        config = course_config(root)
        assert config.CourseDirectory.root == str(root), name
        assert config.CourseDirectory.db_url == "sqlite:///" + str(
            root / "autograder" / "gradebook.db"
        ), name


def test_what_is_the_course_s_is_set_in_the_course_s_config_only():
    course, test_course = (course_config(root) for root in COURSES.values())
    assert "torch" in course.Sandbox.warm_imports and course.GuardedExecute.answer_key_packages
    assert course.GuardedExecute.graded_function_id == r"^impl_(?P<name>\w+)$"
    assert "warm_imports" not in test_course.Sandbox
    assert "answer_key_packages" not in test_course.GuardedExecute
    assert Sandbox().warm_imports == [] and GuardedExecute().graded_function_id == ""


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module's code (not its docstrings), with their lines."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and ast.get_docstring(node, clean=False) is not None
    }
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
    ]


def test_the_grader_holds_no_course_s_default():
    """The course's naming convention, its warm imports and its offline switch live in its config."""
    found = []
    for path in sorted(GRADER.rglob("*.py")):
        text = path.read_text()
        found += [
            f"{path.relative_to(REPO)}: {word}"
            for word in ("impl_", "WARM_IMPORTS")
            if word in text
        ]
        crossing = (
            path.parent.name == "crossing"
        )  # tensors cross as numpy arrays do: a format, not a course
        found += [
            f"{path.relative_to(REPO)}:{line}: {value!r}"
            for line, value in _code_strings(path)
            if value.startswith(("torch", "transformers"))
            and not value.startswith(("torch:", "torch."))
            and not crossing
        ]
        if (
            path.name != "allowed.py"
        ):  # allowed.ENVIRONMENT lets a kernel keep the variable, sets nothing
            found += [
                f"{path.relative_to(REPO)}:{line}: {value!r}"
                for line, value in _code_strings(path)
                if "HF_HUB_OFFLINE" in value
            ]
    assert found == []


def test_environment_variables_give_the_sandbox_settings_their_defaults(monkeypatch):
    for name in (
        bwrap.ENV_VAR,
        pool.ENV_VAR,
        kernel_limits.MEMORY_ENV,
        kernel_limits.PROCESSES_ENV,
        kernel_limits.THREADS_ENV,
    ):
        monkeypatch.delenv(name, raising=False)
    plain = Sandbox()
    assert (plain.mode, plain.warm_kernels, plain.caps()) == ("on", True, (3072 * 2**20, 64, 512))
    monkeypatch.setenv(bwrap.ENV_VAR, "off")
    monkeypatch.setenv(pool.ENV_VAR, "off")
    monkeypatch.setenv(kernel_limits.MEMORY_ENV, "100")
    monkeypatch.setenv(kernel_limits.PROCESSES_ENV, "0")
    monkeypatch.setenv(kernel_limits.THREADS_ENV, "7")
    from_environment = Sandbox()
    assert (from_environment.mode, from_environment.warm_kernels, from_environment.caps()) == (
        "off",
        False,
        (100 * 2**20, 0, 7),
    )
    config = Config()
    config.Sandbox.mode, config.Sandbox.memory_mb, config.Sandbox.warm_kernels = (
        "require",
        2048,
        True,
    )
    chosen = Sandbox(config=config)  # a value in the config wins over the variable
    assert (chosen.mode, chosen.warm_kernels, chosen.caps()) == (
        "require",
        True,
        (2048 * 2**20, 0, 7),
    )


def test_a_mode_the_sandbox_does_not_know_is_refused(monkeypatch):
    monkeypatch.delenv(bwrap.ENV_VAR, raising=False)
    with pytest.raises(TraitError, match="Sandbox.mode='maybe': use on"):
        Sandbox(mode="maybe")
    monkeypatch.setenv(bwrap.ENV_VAR, "maybe")
    with pytest.raises(bwrap.SandboxUnavailable, match="BERTLAB_SANDBOX='maybe'"):
        Sandbox().mode
