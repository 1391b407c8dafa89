"""Warm kernels (``bertlab_grader.sandbox.warm``): forked from one zygote that imported torch and
transformers once, each still a kernel of its own, and nothing one kernel leaves meets the next.

``tests/grader/test_hostile.py`` grades a submission that leaves a daemon rewriting an IPython startup
file and asks the zygote for a kernel of its own; these tests check the parts quickly."""

import asyncio
import os
import socket
import time

import pytest
from traitlets.config import Config

from bertlab_grader.sandbox import manager
from bertlab_grader.sandbox.procfs import process_tree
from bertlab_grader.sandbox.warm import fork, pool, shared
from test_crossing import third_party_imports
from test_kernel_sandbox import needs_bwrap, run

# Left behind by the first kernel: a file in /tmp and in /dev/shm, and a detached daemon.
LEAVE_THINGS = """
import os, time
open("/tmp/planted", "w").write("x")
open("/dev/shm/planted", "w").write("x")
middle = os.fork()
if middle == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(600)
    os._exit(0)
os.waitpid(middle, 0)
print(len([p for p in os.listdir("/proc") if p.isdigit()]))
"""

LOOK = """
import os, sys
print("torch" in sys.modules, open("data.txt").read(), os.path.exists("/tmp/planted"),
      os.path.exists("/dev/shm/planted"), len([p for p in os.listdir("/proc") if p.isdigit()]))
"""


def test_warm_kernels_start_imported_and_leave_nothing_behind(tmp_path, monkeypatch):
    needs_bwrap()
    monkeypatch.setenv(pool.ENV_VAR, "on")

    async def kernel(n: int, code: str):
        work = tmp_path / f"student{n}"
        work.mkdir()
        (work / "data.txt").write_text(f"data{n}")
        config = Config()
        config.Sandbox.warm_imports = ["torch"]  # a course's c.Sandbox.warm_imports
        km = manager.SandboxedKernelManager(config=config)
        await km.start_kernel(cwd=str(work))
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=120)
            warm, zygote = km._warm is not None, km._warm
            out = await run(kc, code)
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)
        return warm, zygote, out

    warm1, zygote, first = asyncio.run(kernel(1, LEAVE_THINGS + LOOK))
    assert warm1 and first.splitlines() == ["4", "True data1 True True 4"], (
        first
    )  # init, zygote, kernel, daemon
    assert not zygote.busy and zygote.others() == [], "the first kernel's daemon outlived it"
    warm2, same, second = asyncio.run(kernel(2, LOOK))
    assert warm2 and same is zygote
    assert second == "True data2 False False 3", (
        f"the second kernel met what the first left: {second}"
    )


SHARED_LOOK = """
import os, sys
open("mine.txt", "w").write(open("data.txt").read())
print("torch" in sys.modules, os.getcwd().startswith("/tmp/k"), sorted(os.listdir(".")))
"""


def test_one_zygote_serves_tests_kernels_several_at_once(tmp_path, monkeypatch):
    """The tests' zygote a grader's workers share (``shared.SharedTestsZygote``): two tests' kernels
    forked from it run at once, each in a folder of its own, and nothing of either is left after."""
    import logging

    from bertlab_grader.sandbox.settings import Sandbox

    needs_bwrap()
    monkeypatch.setenv(pool.ENV_VAR, "on")
    config = Config()
    config.Sandbox.warm_imports = ["torch"]
    tests_zygote = shared.SharedTestsZygote(
        lambda: Sandbox(config=config), dict(os.environ), logging.getLogger()
    ).start()
    for name, value in tests_zygote.env.items():
        monkeypatch.setenv(name, value)
    shared._shared.clear()
    try:

        async def kernels():
            managers = []
            for n in (1, 2):
                work = tmp_path / f"tests{n}"
                work.mkdir()
                (work / "data.txt").write_text(f"data{n}")
                km = manager.SandboxedKernelManager(config=config)
                km.role = "tests"
                await km.start_kernel(cwd=str(work))
                managers.append(km)
            clients = [km.client() for km in managers]
            try:
                for kc in clients:
                    kc.start_channels()
                    await kc.wait_for_ready(timeout=120)
                alive = [await km.is_alive() for km in managers]  # both at once
                outs = [await run(kc, SHARED_LOOK) for kc in clients]
                return [km._warm for km in managers], alive, outs
            finally:
                for kc, km in zip(clients, managers):
                    kc.stop_channels()
                    await km.shutdown_kernel(now=True)

        warm, alive, outs = asyncio.run(kernels())
        zygote = tests_zygote.zygote
        assert all(isinstance(w, shared.SharedZygote) for w in warm) and alive == [True, True]
        assert outs == ["True True ['data.txt', 'mine.txt']"] * 2, outs
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and set(process_tree(zygote.init_pid)) != {
            zygote.init_pid,
            zygote.pid,
        }:
            time.sleep(0.1)
        assert set(process_tree(zygote.init_pid)) == {zygote.init_pid, zygote.pid}
        assert not any(p.name.startswith("k") for p in zygote.scratch.iterdir()), "a slot is left"
    finally:
        shared._shared.clear()
        tests_zygote.stop()


def test_warm_kernels_can_be_turned_off(tmp_path, monkeypatch):
    needs_bwrap()
    monkeypatch.setenv(pool.ENV_VAR, "off")
    km = manager.SandboxedKernelManager(config=Config())

    async def start():
        await km.start_kernel(cwd=str(tmp_path))
        try:
            return km._warm, km.format_kernel_cmd()
        finally:
            await km.shutdown_kernel(now=True)

    zygote, cmd = asyncio.run(start())
    assert (
        zygote is None
        and "bertlab_grader.sandbox.warm.stub" not in cmd
        and "bwrap" in " ".join(cmd)
    )


def test_the_zygote_serves_only_processes_outside_its_sandbox():
    inside, other = socket.socketpair(
        socket.AF_UNIX
    )  # a peer in this PID namespace, as a kernel is
    with inside, other:
        assert not fork.from_outside(inside)


def test_a_kernels_folder_is_copied_only_when_small(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "nb.ipynb").write_text("{}")
    assert pool.copy_folder(tmp_path / "src", tmp_path / "copy")
    assert (tmp_path / "copy" / "nb.ipynb").read_text() == "{}"
    assert not pool.copy_folder(tmp_path, tmp_path / "inside")  # the target inside the source
    assert not pool.copy_folder(tmp_path / "src", tmp_path / "big", max_bytes=1)
    assert not (tmp_path / "big").exists()
    with pytest.raises(ValueError, match="BERTLAB_WARM_KERNEL"):
        import os

        os.environ[pool.ENV_VAR] = "maybe"
        try:
            pool.enabled()
        finally:
            del os.environ[pool.ENV_VAR]


def test_the_stub_and_the_zygote_import_the_standard_library_only():
    """The stub starts once per notebook and the zygote forks every kernel: importing either (and
    the packages above them) pulls in no third-party module, so neither costs an import a kernel
    does not ask for."""
    statement = (
        "import bertlab_grader.sandbox.warm.stub, bertlab_grader.sandbox.warm.zygote, "
        "bertlab_grader.sandbox.warm.many"
    )
    assert third_party_imports(statement) == []


# A warm kernel can write to its zygote's socket folder, on the grader's disk (no tmpfs): its
# connection file lies there. Files of 20 MB until the watch stops it.
FILL_THE_SOCKET_FOLDER = """
import json, os, sys
from ipykernel.kernelapp import IPKernelApp
folder = os.path.dirname(IPKernelApp.instance().connection_file)
for i in range(40):
    with open(os.path.join(folder, f"fill{i}"), "wb") as f:
        f.write(b"x" * 20 * 2**20)
    import time; time.sleep(0.05)
print("wrote 800 MB")
"""


def test_a_warm_kernel_that_fills_its_zygotes_folder_is_stopped(tmp_path, monkeypatch):
    needs_bwrap()
    monkeypatch.setenv(pool.ENV_VAR, "on")

    async def kernel(code: str):
        config = Config()
        config.Sandbox.work_mb = 100  # the cap on what a kernel may leave on the grader's disk
        km = manager.SandboxedKernelManager(config=config)
        await km.start_kernel(cwd=str(tmp_path))
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=120)
            zygote = km._warm
            task = asyncio.ensure_future(run(kc, code))
            for _ in range(300):  # until the watch stops it, or the cell ends (30 s at most)
                if km.watch.reason or task.done():
                    break
                await asyncio.sleep(0.1)
            out = task.result() if task.done() and not task.exception() else "no reply"
            task.cancel()
            return zygote, out, km.watch.reason
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    zygote, out, reason = asyncio.run(kernel(FILL_THE_SOCKET_FOLDER))
    assert zygote is not None
    assert "wrote 800 MB" not in out and reason and "over the disk cap" in reason, (out, reason)
    # the zygote's next kernel starts with none of it left
    LEFT = "import glob, os\nprint(len(glob.glob(os.path.join(os.path.dirname(os.getcwd()), '..', '*', 'fill*'))))"
    same, left, _ = asyncio.run(kernel(LEFT))
    assert same is zygote and left == "0", left
    assert not list(zygote.scratch.rglob("fill*")), "the next kernel met what this one wrote"
