"""Links from a chapter of the website to its graded notebook: Colab, Binder, a JupyterHub.

Every launch link is built from ONE setting, ``repository.url`` (and ``repository.branch``) in
the book's ``_config.yml``, with the launch services of ``launch_buttons``: change the
repository there and every chapter, the README's install line and the notebooks' setup cells
follow (``tests/course/test_launch_links.py`` checks that no other repository URL is written down).
The released notebook itself is offered for download by the page's ``{download}`` link, which
Sphinx copies into the site; solutions are never linked.

Used by the "Exercise" section at the end of every chapter.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlparse


def book_root(start: Path | None = None) -> Path:
    """The checkout whose book is being built: the nearest folder, from ``start`` (default: the
    working directory, which is ``book/`` while a page runs) upwards, that holds ``_config.yml``.

    Found from where the book runs, not from where this package is installed, so the links work
    the same after ``pip install .`` as in an editable install."""
    start = Path(start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / "_config.yml").is_file():
            return folder
    raise FileNotFoundError(
        f"bertlab: no _config.yml in {start} or above it; exercise links are built from the book's "
        "_config.yml (repository.url), so build the book from a checkout of the course repository."
    )


@dataclass(frozen=True)
class Repository:
    url: str  # https://github.com/<owner>/<name>
    branch: str
    colab_url: str
    binderhub_url: str
    jupyterhub_url: str

    @property
    def owner_and_name(self) -> str:
        return urlparse(self.url).path.strip("/")


def repository(config: Path | None = None) -> Repository:
    """The course repository and launch services, as ``_config.yml`` sets them (by default the
    one of :func:`book_root`)."""
    config = config or book_root() / "_config.yml"
    if not Path(config).exists():
        raise FileNotFoundError(
            f"bertlab: {config} not found; exercise links are built from the book's _config.yml "
            "(repository.url), so run this from a checkout of the course repository."
        )
    import yaml

    settings = yaml.safe_load(Path(config).read_text())
    repo, launch = settings.get("repository", {}), settings.get("launch_buttons", {})
    url = str(repo.get("url", "")).rstrip("/")
    if urlparse(url).netloc != "github.com" or urlparse(url).path.count("/") != 2:
        raise ValueError(
            f"bertlab: repository.url in {config} must be https://github.com/<owner>/<name>, not {url!r}"
        )
    return Repository(
        url=url,
        branch=str(repo.get("branch", "main")),
        colab_url=str(launch.get("colab_url") or "").rstrip("/"),
        binderhub_url=str(launch.get("binderhub_url") or "").rstrip("/"),
        jupyterhub_url=str(launch.get("jupyterhub_url") or "").rstrip("/"),
    )


def notebook_in_repo(assignment: str) -> str:
    """Where the released notebook of an assignment sits in the repository."""
    return f"exercises/{assignment}/{assignment}.ipynb"


def launch_links(assignment: str, repo: Repository | None = None) -> dict[str, str]:
    """{service name: URL} that opens the released notebook of ``assignment``."""
    repo = repo or repository()
    path = notebook_in_repo(assignment)
    links = {"GitHub": f"{repo.url}/blob/{repo.branch}/{path}"}
    if repo.colab_url:
        links["Colab"] = f"{repo.colab_url}/github/{repo.owner_and_name}/blob/{repo.branch}/{path}"
    if repo.binderhub_url:
        links["Binder"] = (
            f"{repo.binderhub_url}/v2/gh/{repo.owner_and_name}/{repo.branch}?labpath={quote(path, safe='')}"
        )
    if (
        repo.jupyterhub_url
    ):  # nbgitpuller: clone (or update) the repository into the hub, then open it
        name = repo.owner_and_name.split("/")[1]
        links["JupyterHub"] = (
            f"{repo.jupyterhub_url}/hub/user-redirect/git-pull?repo={quote(repo.url + '.git', safe='')}"
            f"&branch={repo.branch}&urlpath={quote(f'lab/tree/{name}/{path}', safe='')}"
        )
    return links


def exercise_links(assignment: str):
    """The launch links of ``assignment`` as Markdown, for a chapter's Exercise section."""
    from IPython.display import Markdown

    if not (book_root() / notebook_in_repo(assignment)).exists():
        raise FileNotFoundError(
            f"bertlab: no released notebook {notebook_in_repo(assignment)}: run `make exercises`"
        )
    links = " · ".join(f"[{name}]({url})" for name, url in launch_links(assignment).items())
    return Markdown(f"Open **{assignment}** in: {links}")
