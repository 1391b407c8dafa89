"""A process tree read from ``/proc``: its processes and threads, its resident memory, what a folder
holds on disk, and how to kill it all. The standard library only: the warm kernels' zygote and
stub use it inside and beside their sandbox (:mod:`bertlab_grader.sandbox.warm`), the kernels' caps
in the grader (:mod:`bertlab_grader.sandbox.limits`).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


def process_tree(root: int, threads: dict[int, int] | None = None) -> list[int]:
    """``root`` and every process descended from it, read from ``/proc``. If ``threads`` is a
    dict, it receives each process's thread count (``num_threads``, the 20th field of its stat)."""
    children: dict[int, list[int]] = {}
    counts: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (
                (entry / "stat").read_text().rsplit(")", 1)[1].split()
            )  # the name may hold spaces
        except OSError:
            continue  # it ended meanwhile
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        counts[int(entry.name)] = int(fields[17])
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    if threads is not None:
        threads.update({pid: counts[pid] for pid in tree if pid in counts})
    return tree


def kill_all(pids: list[int]) -> None:
    """SIGKILL every process in ``pids``; one already gone is skipped."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def resident_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            pass
    return total


def folder_use(folder: Path, most_files: int = 10_000) -> tuple[int, int]:
    """(bytes on disk, files) under ``folder``; counting stops past ``most_files`` files."""
    used, files, todo = 0, 0, [str(folder)]
    while todo and files <= most_files:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
                else:
                    files += 1
                    used += entry.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                pass
    return used, files
