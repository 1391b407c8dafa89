"""Hard caps for one kernel, from the Linux kernel's own limits: a cgroup of its own.

:class:`bertlab_grader.sandbox.limits.KernelWatch` polls ``/proc`` five times a second: portable,
but a burst between two polls (6 GB in a tenth of a second) reaches the machine first, and
``RLIMIT_NPROC`` does not bind root. Where the grader may make a child of its own cgroup (cgroup
v2's ``memory.max`` and ``pids.max``, or the v1 ``memory`` and ``pids`` controllers), each kernel
gets one: an allocation past ``memory.max`` is refused by the kernel's own OOM killer inside its
cgroup, a fork past ``pids.max`` fails (``BlockingIOError``), and the machine never sees either.
:func:`why_unavailable` says why not where it cannot; the poll then stays the only cap, and
``python -m bertlab_grader doctor`` and the grader's log say which is in force.
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from pathlib import Path

_counter = itertools.count()


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(mount root, mount point, file system type, super options) of every cgroup mount."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and tail and tail[0] in {"cgroup", "cgroup2"}:
            found.append(
                (fields[3], fields[4], tail[0], set(tail[2].split(",")) if len(tail) > 2 else set())
            )
    return found


def _own_groups() -> dict[str, str]:
    """This process's cgroup path for each v1 controller, and ``""`` for the v2 hierarchy."""
    found = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            found[name] = path
    return found


def _folder(mount_root: str, mount_point: str, path: str) -> Path:
    relative = (
        os.path.relpath(path, mount_root) if path.startswith(mount_root) else path.lstrip("/")
    )
    return Path(mount_point) / ("" if relative == "." else relative)


def parents() -> dict[str, Path]:
    """Where this process may make a kernel's cgroup, per controller (``memory``, ``pids``): the
    folder of its own cgroup in each hierarchy that has the controller (v2 first)."""
    own, found = _own_groups(), {}
    for root, point, kind, options in _mounts():
        if kind == "cgroup2" and "" in own:
            folder = _folder(root, point, own[""])
            enabled = (
                set((folder / "cgroup.subtree_control").read_text().split())
                if (folder / "cgroup.subtree_control").exists()
                else set()
            )
            for name in ("memory", "pids"):
                if name in enabled:
                    found.setdefault(name, folder)
    for root, point, kind, options in _mounts():
        for name in ("memory", "pids"):
            if kind == "cgroup" and name in options and name in own:
                found.setdefault(name, _folder(root, point, own[name]))
    return found


def _write(path: Path, value: str) -> None:
    path.write_text(value)


class KernelCgroup:
    """One kernel's cgroups (a memory one and a pids one, possibly the same folder in v2)."""

    def __init__(self, folders: dict[str, Path], memory_bytes: int, processes: int):
        self.folders, self.memory_bytes, self.processes = folders, memory_bytes, processes

    @classmethod
    def create(cls, memory_bytes: int, processes: int) -> "KernelCgroup":
        """A new cgroup per controller with the caps written; OSError where it cannot be made."""
        where = parents()
        name = f"bertlab-kernel-{os.getpid()}-{next(_counter)}"
        folders: dict[str, Path] = {}
        try:
            for controller, cap in (("memory", memory_bytes), ("pids", processes)):
                if not cap:
                    continue
                if controller not in where:
                    raise OSError(f"no {controller} cgroup controller this process may use")
                folder = where[controller] / name
                if folder not in folders.values():
                    folder.mkdir()
                folders[controller] = folder
                if controller == "pids":
                    _write(folder / "pids.max", str(cap))
                elif (folder / "memory.max").exists():  # v2
                    _write(folder / "memory.max", str(cap))
                    if (folder / "memory.swap.max").exists():
                        _write(folder / "memory.swap.max", "0")
                else:  # v1
                    _write(folder / "memory.limit_in_bytes", str(cap))
                    if (folder / "memory.memsw.limit_in_bytes").exists():
                        _write(folder / "memory.memsw.limit_in_bytes", str(cap))
        except OSError:
            cls(folders, 0, 0).remove()
            raise
        return cls(folders, memory_bytes, processes)

    def add(self, pids: list[int]) -> None:
        """Move ``pids`` into every cgroup of this kernel (what they start later is born there)."""
        for folder in dict.fromkeys(self.folders.values()):
            for pid in pids:
                try:
                    _write(folder / "cgroup.procs", str(pid))
                except OSError:  # it ended meanwhile
                    pass

    def members(self) -> list[int]:
        found = set()
        for folder in self.folders.values():
            try:
                found |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
            except OSError:
                pass
        return sorted(found)

    def memory_used(self) -> int | None:
        """Bytes the cgroup's processes use now (pages shared by forks counted once), or None."""
        folder = self.folders.get("memory")
        for name in ("memory.current", "memory.usage_in_bytes"):  # v2, v1
            try:
                return int((folder / name).read_text()) if folder is not None else None
            except (OSError, ValueError):
                continue
        return None

    def out_of_memory(self) -> bool:
        """Whether the OOM killer has killed a process of this cgroup at its memory cap."""
        folder = self.folders.get("memory")
        if folder is None:
            return False
        for name in ("memory.events", "memory.oom_control"):  # v2, v1
            try:
                for line in (folder / name).read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and int(value) > 0:
                        return True
            except (OSError, ValueError):
                continue
        return False

    def reason(self) -> str | None:
        if self.out_of_memory():
            return (
                f"it went over the memory cap of {self.memory_bytes / 2**20:,.0f} MB (a hard limit: "
                "the kernel's cgroup)"
            )
        return None

    def kill(self) -> None:
        for pid in self.members():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def remove(self, timeout: float = 5) -> None:
        """Kill whatever is left in it and remove its folders."""
        deadline = time.monotonic() + timeout
        for folder in dict.fromkeys(self.folders.values()):
            while folder.exists():
                self.kill()
                try:
                    folder.rmdir()
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.02)


def why_unavailable() -> str | None:
    """None if each kernel can have a cgroup with hard memory and process caps here, else why not."""
    try:
        KernelCgroup.create(2**30, 64).remove()
    except OSError as exc:
        return f"the grader cannot make a cgroup here ({exc})"
    return None
