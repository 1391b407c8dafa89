"""Launch links come from one repository URL in _config.yml, and nothing else names another."""

import re

import pytest

from bertlab import launch_links
import course_fixture
from bertlab.models import public_path

REPO = course_fixture.REPO


def test_links_follow_the_one_setting(tmp_path):
    config = tmp_path / "_config.yml"
    config.write_text(
        "repository:\n  url: https://github.com/uni-x/nlp-course\n  branch: spring\n"
        "launch_buttons:\n  colab_url: https://colab.research.google.com\n"
        "  binderhub_url: https://mybinder.org\n  jupyterhub_url: https://hub.uni-x.edu\n"
    )
    links = launch_links.launch_links("ps04-mlm", launch_links.repository(config))
    assert (
        links["GitHub"]
        == "https://github.com/uni-x/nlp-course/blob/spring/exercises/ps04-mlm/ps04-mlm.ipynb"
    )
    assert links["Colab"] == (
        "https://colab.research.google.com/github/uni-x/nlp-course/blob/spring/"
        "exercises/ps04-mlm/ps04-mlm.ipynb"
    )
    assert (
        links["Binder"]
        == "https://mybinder.org/v2/gh/uni-x/nlp-course/spring?labpath=exercises%2Fps04-mlm%2Fps04-mlm.ipynb"
    )
    assert links["JupyterHub"].startswith("https://hub.uni-x.edu/hub/user-redirect/git-pull?repo=")
    assert (
        "urlpath=lab%2Ftree%2Fnlp-course%2Fexercises%2Fps04-mlm%2Fps04-mlm.ipynb"
        in links["JupyterHub"]
    )


def test_a_bad_repository_url_says_what_to_set(tmp_path):
    config = tmp_path / "_config.yml"
    config.write_text("repository:\n  url: gitlab.com/x\n")
    with pytest.raises(ValueError, match="repository.url"):
        launch_links.repository(config)
    with pytest.raises(FileNotFoundError, match="_config.yml"):
        launch_links.repository(tmp_path / "missing.yml")


def test_every_exercise_has_links():
    for assignment in course_fixture.assignments():
        assert "colab" in launch_links.exercise_links(assignment).data.lower()
    with pytest.raises(FileNotFoundError, match="make exercises"):
        launch_links.exercise_links("ps99-nothing")


def test_no_other_repository_url_is_written_down():
    """The README, the guides, the chapters and the notebooks name the course repository only as the
    config does."""
    url = launch_links.repository().url
    files = [
        REPO / "README.md",
        *(REPO / "docs").glob("*.md"),
        *(REPO / "book").glob("*.md"),
        *(REPO / "solutions").rglob("*.ipynb"),
        *(REPO / "exercises").rglob("*.ipynb"),
    ]
    for path in files:
        for found in re.findall(r"github\.com/[\w.-]+/[\w.-]+", path.read_text()):
            if "bertlab" not in found:  # other projects' repositories (nbgrader, bubblewrap, ...)
                continue
            assert "https://" + found == url, (
                f"{path.relative_to(REPO)} names {found}, _config.yml says {url}"
            )


def test_public_path_hides_the_build_machine(tmp_path, monkeypatch):
    monkeypatch.setenv("BERTLAB_CACHE", str(tmp_path / "cache"))
    assert public_path(str(tmp_path / "cache" / "abc")) == "$BERTLAB_CACHE/abc"
    assert public_path("bert-base-uncased") == "bert-base-uncased"
    import sysconfig

    assert public_path(sysconfig.get_paths()["purelib"] + "/pkg/model").startswith(
        "<site-packages>/pkg"
    )
