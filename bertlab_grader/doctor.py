"""``python -m bertlab_grader doctor``: what a grading kernel on this machine can read, write, reach and use.

Run it on a grading machine before a batch (``make doctor``). It starts the sandbox a kernel
gets, with the course's own settings (``c.Sandbox`` in its ``nbgrader_config.py``), and asks
from inside: is the course there, the home folder, the gradebook; what can it write; can it
reach the network; which environment variables does it keep. Then it says which caps are hard.
It exits 1 when kernels would run unsandboxed, or when anything of the course is in sight.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bertlab_grader import layout
from bertlab_grader.sandbox.limits import hard_caps
from bertlab_grader.sandbox import allowed, bwrap
from bertlab_grader.sandbox.settings import Sandbox

PROBE = """
import json, os, socket, sys
course, home, gradebook = sys.argv[1:4]
def writable(path):
    try:
        open(path, "a").close()
        return True
    except OSError:
        return False
try:
    socket.create_connection(("127.0.0.1", 22), timeout=2).close()
    network = "reached 127.0.0.1"
except OSError as exc:
    network = f"none ({exc.strerror or exc})"
print(json.dumps({
    "root": sorted(os.listdir("/")),
    "course visible": any(os.path.exists(os.path.join(course, f)) for f in ("solutions", "autograder")),
    "home visible": sorted(os.listdir(home)) if os.path.isdir(home) else [],
    "gradebook visible": os.path.exists(gradebook),
    "writes /": writable("/doctor"), "writes /tmp": writable("/tmp/doctor"), "writes its folder": writable("doctor"),
    "network": network,
    "variables": sorted(os.environ),
    "processes seen": len([p for p in os.listdir("/proc") if p.isdigit()]),
}))
"""


def course_settings(course: Path) -> Sandbox:
    """The course's ``c.Sandbox`` settings, as nbgrader loads its config from the course root."""
    from traitlets.config.loader import PyFileConfigLoader

    config = (
        PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
        if (course / "nbgrader_config.py").is_file()
        else None
    )
    return Sandbox(config=config) if config is not None else Sandbox()


def report(course: Path) -> tuple[list[str], bool]:
    """The doctor's lines, and whether this machine grades as the guide promises."""
    lines, ok = [f"course: {course}"], True
    settings = course_settings(course)
    mode, problem = settings.mode, bwrap.why_unavailable()
    if mode == "off":
        lines.append("sandbox: OFF (Sandbox.mode=off): a kernel runs with the instructor's rights")
        ok = False
    elif problem:
        lines.append(
            f"sandbox: UNAVAILABLE ({problem}); Sandbox.mode={mode}: kernels are refused "
            "(install bubblewrap, or grade unsandboxed on purpose: Sandbox.mode=off)"
        )
        ok = False
    else:
        lines.append(f"sandbox: bubblewrap, allow-list root (Sandbox.mode={mode})")
    memory, processes, threads = settings.caps()
    lines.append(
        f"caps: memory {memory // 2**20:,} MB, {processes} processes, {threads} threads; {hard_caps()}"
    )
    lines.append(
        f"disk: its folder a {settings.work_mb:,} MB tmpfs copy, /tmp and /dev/shm {settings.tmp_mb:,} MB "
        f"each, no file over {settings.file_mb:,} MB"
    )
    if mode == "off" or problem:
        return lines, ok
    with tempfile.TemporaryDirectory(prefix="bertlab-doctor-") as folder:
        readable = allowed.readable_paths(settings.readable_folders())
        environment = allowed.kept_environment(dict(os.environ), settings.environment)
        gradebook = layout.sqlite_file(layout.gradebook_url(course)) or Path("/nonexistent")
        cmd = bwrap.sandbox_command(
            [sys.executable, "-c", PROBE, str(course), str(Path.home()), str(gradebook)],
            writable=Path(folder),
            readable=readable,
            bwrap=bwrap.bwrap_path(),
            environment=environment,
            **settings.sizes(),
        )
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        return lines + [f"the probe kernel failed: {done.stderr.strip()[-500:]}"], False
    seen = json.loads(done.stdout)
    lines.append(
        "reads: "
        + ", ".join(str(p) for p in readable)
        + " (read-only), and the system (/usr, parts of /etc)"
    )
    lines.append(f"root of a kernel: {' '.join(seen['root'])}")
    lines.append(
        f"course repository visible: {'YES' if seen['course visible'] else 'no'}; gradebook visible: "
        f"{'YES' if seen['gradebook visible'] else 'no'}; home folder shows: {seen['home visible'] or 'nothing'}"
    )
    lines.append(
        f"writes: / {seen['writes /']}, /tmp {seen['writes /tmp']}, its own folder {seen['writes its folder']}"
    )
    lines.append(f"network: {seen['network']}; processes it sees: {seen['processes seen']}")
    lines.append(f"environment variables kept: {', '.join(seen['variables'])}")
    ok = (
        ok and not seen["course visible"] and not seen["gradebook visible"] and not seen["writes /"]
    )
    return lines, ok


def doctor(course: Path) -> int:
    lines, ok = report(course)
    print("\n".join(lines))
    print(
        "verdict: "
        + (
            "kernels grade sandboxed, seeing nothing of the course"
            if ok
            else "NOT as docs/instructors.md promises: see above"
        )
    )
    return 0 if ok else 1
