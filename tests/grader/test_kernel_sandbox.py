"""The autograder's sandbox on its own: what a sandboxed process can read and write.

``tests/grader/test_hostile.py`` grades a submission that attacks the gradebook and the source
notebooks end to end; these tests check the bubblewrap command itself, quickly."""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bertlab_grader.sandbox import allowed, bwrap, manager


async def run(kc, code: str) -> str:
    """Run ``code`` in a kernel (a client ``kc``); its printed text and error names, stripped."""
    msg_id, texts = kc.execute(code), []
    while True:
        msg = await kc._async_get_iopub_msg(timeout=60)
        if msg["msg_type"] == "stream":
            texts.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            texts.append(msg["content"]["ename"])
        elif (
            msg["msg_type"] == "status"
            and msg["content"]["execution_state"] == "idle"
            and msg["parent_header"].get("msg_id") == msg_id
        ):
            return "".join(texts).strip()


def needs_bwrap():
    problem = bwrap.why_unavailable()
    if problem:
        if bwrap.mode() == "require":
            pytest.fail(f"BERTLAB_SANDBOX=require, but {problem}")
        pytest.skip(f"{problem}: the autograder runs unsandboxed here")


def test_command_is_an_allow_list(tmp_path):
    cmd = bwrap.sandbox_command(
        ["python", "-m", "ipykernel_launcher"],
        writable=tmp_path / "a/b",
        readable=[tmp_path / "pkg"],
        bwrap="bwrap",
        environment={"PATH": "/usr/bin"},
        work_bytes=2**20,
    )
    assert cmd[4] == "bwrap" and cmd[-3:] == ["python", "-m", "ipykernel_launcher"]
    text = " ".join(cmd)
    assert "--ro-bind / /" not in text, "the root is empty: only what is named is bound"
    assert (
        "--ro-bind /usr /usr" in text and f"--ro-bind {tmp_path / 'pkg'} {tmp_path / 'pkg'}" in text
    )
    # the submission's folder: a size-capped tmpfs with a copy of it, after the read-only binds
    assert (
        text.index(f"--ro-bind {tmp_path / 'pkg'}")
        < text.index(f"--ro-bind {tmp_path / 'a/b'} {bwrap.ORIGINAL}")
        < text.index(f"--size {2**20} --tmpfs {tmp_path / 'a/b'}")
        < text.index("--remount-ro /")
    )
    assert "--tmpfs /tmp" in text and "--unshare-net" in text and "--clearenv" in text
    assert "--cap-drop ALL" in text  # a grader run as root would hand its kernels CAP_SYS_ADMIN


def test_a_sandboxed_process_has_no_capabilities(tmp_path):
    """Not even when the grader runs as root (CI does): with CAP_SYS_ADMIN a kernel could remount
    the read-only course read-write."""
    needs_bwrap()
    cmd = bwrap.sandbox_command(
        ["grep", "CapEff", "/proc/self/status"],
        writable=tmp_path,
        readable=allowed.readable_paths(),
        bwrap=bwrap.bwrap_path(),
    )
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert done.stdout.split() == ["CapEff:", "0000000000000000"], done


def test_a_kernel_keeps_only_the_variables_it_is_allowed():
    environ = {
        "PATH": "/usr/bin",
        "HF_HUB_OFFLINE": "1",
        "LC_ALL": "C",
        "BERTLAB_MODEL": "x",
        "BERTLAB_GRADEBOOK_URL": "postgresql://grader:secret@db/course",
        "VIRTUAL_ENV": "/home/me/course/.venv",
        "PWD": "/home/me/course",
        "AWS_SECRET_ACCESS_KEY": "k",
    }
    assert allowed.kept_environment(environ) == {
        "PATH": "/usr/bin",
        "HF_HUB_OFFLINE": "1",
        "LC_ALL": "C",
    }
    assert "BERTLAB_MODEL" in allowed.kept_environment(environ, ["BERTLAB_MODEL"])


def test_bad_mode_says_what_to_use(monkeypatch):
    monkeypatch.setenv(bwrap.ENV_VAR, "maybe")
    with pytest.raises(bwrap.SandboxUnavailable, match="on .*require or off"):
        bwrap.mode()


@pytest.fixture
def course():
    """A course folder outside /tmp (the sandbox gives the kernel its own empty /tmp; the
    repository itself may be a clone in /tmp)."""
    folder = Path(tempfile.mkdtemp(prefix=".bertlab-sandbox-test-", dir=Path.home()))
    yield folder
    shutil.rmtree(folder)


def test_a_bwrap_that_cannot_sandbox_is_reported(monkeypatch):
    from traitlets.config import Config

    assert "cannot create a sandbox here" in bwrap.sandbox_problem("/bin/false")
    assert "could not run" in bwrap.sandbox_problem("/nonexistent/bwrap")
    monkeypatch.setattr(bwrap, "bwrap_path", lambda: "/bin/false")
    km = manager.SandboxedKernelManager(config=Config())
    km._launch_args = {}
    for mode in ("on", "require"):  # no kernel runs unsandboxed unless the instructor says so
        monkeypatch.setenv(bwrap.ENV_VAR, mode)
        with pytest.raises(
            bwrap.SandboxUnavailable,
            match=f"mode is {mode}, but bwrap cannot create a sandbox.*"
            'Install bubblewrap.*mode = "off"',
        ):
            km.format_kernel_cmd()
    monkeypatch.setenv(bwrap.ENV_VAR, "off")
    assert km.format_kernel_cmd()[0] == sys.executable and "bwrap" not in " ".join(
        km.format_kernel_cmd()
    )


def test_sandboxed_process_sees_its_own_folder_and_nothing_of_the_course(course):
    """The course (solutions, gradebook, notes, another student's work) is not there at all,
    even by absolute path; the kernel's own folder is a copy, on a size-capped tmpfs."""
    needs_bwrap()
    own = course / "autograder" / "autograded" / "alice" / "ps00"
    own.mkdir(parents=True)
    (own / "alice.txt").write_text("alice's")
    (course / "autograder" / "autograded" / "bob").mkdir()
    (course / "autograder" / "gradebook.db").write_text("grades")
    (course / "solutions").mkdir()
    (course / "solutions" / "ps00.ipynb").write_text("hidden tests")
    (course / "notes.txt").write_text("notes")
    script = f"""
import os
def attempt(path):  # opening for append writes nothing, but needs a writable file system
    try:
        open(path, "a").close()
        return "opened"
    except OSError:
        return "refused"
with open("here.txt", "w") as f:
    f.write("x")
print(attempt({str(allowed.PACKAGE / "__init__.py")!r}), attempt("/tmp/scratch"), attempt("/new"))
print([os.path.exists(p) for p in ({str(course / "solutions")!r},
       {str(course / "autograder" / "gradebook.db")!r}, {str(course / "notes.txt")!r},
       {str(course / "autograder" / "autograded" / "bob")!r}, {str(Path.home())!r} + "/.bashrc")])
print(sorted(os.listdir(".")), sorted(os.listdir({str(course)!r})))
try:
    open("big", "wb").write(b"x" * 3 * 2**20)
except OSError as exc:
    print(type(exc).__name__, exc.errno)
"""
    cmd = bwrap.sandbox_command(
        [sys.executable, "-c", script],
        writable=own,
        readable=allowed.readable_paths(),
        bwrap=bwrap.bwrap_path(),
        work_bytes=2 * 2**20,
        file_bytes=2**30,
    )
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "refused opened refused", (
        out
    )  # all read-only but /tmp (private) and its own folder
    assert out[1] == "[False, False, False, False, False]", (
        out
    )  # out of sight, by absolute path too
    assert out[2] == "['alice.txt', 'here.txt'] ['autograder']", (
        out
    )  # its copy; of the course, the path to it only
    assert out[3] == "OSError 28", out  # its folder is a 2 MB tmpfs: no space left
    assert sorted(p.name for p in own.iterdir()) == ["alice.txt"], "what it wrote was thrown away"
    assert (course / "autograder" / "gradebook.db").read_text() == "grades"


def test_no_file_grows_past_the_file_cap(tmp_path):
    needs_bwrap()
    script = "try:\n    open('/tmp/big', 'wb').write(b'x' * 3 * 2**20)\nexcept OSError as exc:\n    print(exc.errno)"
    cmd = bwrap.sandbox_command(
        [sys.executable, "-c", script],
        writable=tmp_path,
        readable=allowed.readable_paths(),
        bwrap=bwrap.bwrap_path(),
        file_bytes=2**20,
    )
    assert (
        subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip() == "27"
    )  # EFBIG


def test_a_sandboxed_kernel_runs_is_interrupted_and_cannot_signal_the_grader(tmp_path):
    """A real kernel: nbgrader interrupts a cell past its timeout, and that must not kill it;
    it talks to the grader over IPC sockets, and reaches no network, not even the grader's
    loopback."""
    needs_bwrap()
    import asyncio
    import os
    import socket

    server = socket.create_server(("127.0.0.1", 0))  # the grader's side of loopback
    port = server.getsockname()[1]

    from traitlets.config import Config

    async def session():
        km = manager.SandboxedKernelManager(config=Config())
        await km.start_kernel(cwd=str(tmp_path))
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=120)
            seen = await run(
                kc,
                f"import os\ntry:\n    os.kill({os.getpid()}, 0)\n    print('seen')\n"
                "except ProcessLookupError:\n    print('hidden')",
            )
            network = await run(
                kc,
                f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), "
                "timeout=5)\n    print('reached')\nexcept OSError:\n    print('no network')",
            )
            sockets = sorted(p.name for p in km._socket_dir.iterdir() if p.is_socket())
            loop = asyncio.ensure_future(run(kc, "while True: pass"))
            await asyncio.sleep(2)
            await km.interrupt_kernel()
            interrupted = await asyncio.wait_for(loop, 60)
            alive = await run(kc, "print(6 * 7)")
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)
        return seen, network, km.transport, sockets, interrupted, alive

    seen, network, transport, sockets, interrupted, alive = asyncio.run(session())
    server.close()
    assert (seen, network, interrupted, alive) == (
        "hidden",
        "no network",
        "KeyboardInterrupt",
        "42",
    )
    assert (
        transport == "ipc" and len(sockets) == 5 and all(name.startswith("k-") for name in sockets)
    ), sockets


def test_editable_packages_are_bound_but_not_their_checkout():
    """A course installed with ``pip install -e`` from a checkout under /tmp (the private /tmp hides
    it) is still importable in the kernel: its package folders are bound, never the checkout with
    its solutions."""
    import bertlab

    readable = allowed.readable_paths()
    assert (
        Path(bertlab.__file__).resolve().parent in readable
    )  # the course, installed editable here
    assert not any(p in readable for p in Path(sys.prefix).resolve().parents), (
        "never a folder around the venv"
    )
    assert allowed.PACKAGE in readable and Path(sys.prefix).resolve() in readable
    checkout = Path(__file__).resolve().parents[2]
    assert checkout not in readable and checkout / "solutions" not in readable


def test_the_kernels_read_the_installed_package_not_a_copy_in_the_current_folder(
    tmp_path, monkeypatch
):
    """``python -m bertlab_grader`` puts the current folder first on the path: a course folder that
    holds its own ``bertlab`` must not send the sandbox to that copy (the kernels import the
    installed one, and could not see it)."""
    import sys

    from bertlab_grader.sandbox.allowed import editable_packages

    installed = {p.name: p for p in editable_packages()}["bertlab"]
    (tmp_path / "bertlab").mkdir()
    (tmp_path / "bertlab" / "__init__.py").write_text("COPY = True\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "bertlab", raising=False)
    import bertlab

    assert getattr(bertlab, "COPY", False)  # the copy is what this process imports
    assert {p.name: p for p in editable_packages()}["bertlab"] == installed
    monkeypatch.delitem(sys.modules, "bertlab")
