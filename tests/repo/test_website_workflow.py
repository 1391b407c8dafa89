"""The website is published where the notebooks' "Chapter" links point.

``_config.yml``'s ``html.baseurl`` is the GitHub Pages address of ``repository.url``, and the
workflow ``.github/workflows/website.yml`` builds the book as a reader does (``make book``) and
publishes ``_build/html`` there with GitHub's Pages actions. GitHub runs it; this checks that it
says so.
"""

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "website.yml"


def test_the_links_address_is_the_repositorys_pages_site():
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    owner, name = config["repository"]["url"].removeprefix("https://github.com/").split("/")[:2]
    assert config["html"]["baseurl"] == f"https://{owner}.github.io/{name}/"


def test_the_workflow_builds_the_book_and_publishes_it_from_main():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key "on" as True
    assert triggers["push"]["branches"] == ["main"]
    build = workflow["jobs"]["build"]["steps"]
    assert any(step.get("run") == "make book" for step in build), "built as README.md says"
    upload = next(
        s for s in build if str(s.get("uses", "")).startswith("actions/upload-pages-artifact")
    )
    assert upload["with"]["path"] == "_build/html"
    deploy = workflow["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert any(str(s.get("uses", "")).startswith("actions/deploy-pages") for s in deploy["steps"])
    assert workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
