"""bertlab_grader.sandbox.limits: a process tree over its memory or process cap is killed, and says why."""

import subprocess
import sys
import time

import pytest

from bertlab_grader.sandbox import limits
from bertlab_grader.sandbox.limits import KernelWatch


def run_watched(
    code: str, memory_mb: int = 0, processes: int = 0, seconds: float = 20, threads: int = 0
):
    child = subprocess.Popen(
        [sys.executable, "-c", code], start_new_session=True
    )  # as jupyter_client starts kernels
    watch = KernelWatch(
        child.pid, memory_mb * 2**20, processes, period=0.05, threads=threads
    ).start()
    try:
        child.wait(timeout=seconds)
    finally:
        watch.stop()
        child.kill()
    return child.returncode, watch.reason


def test_a_memory_bomb_is_killed_at_the_cap():
    code, why = run_watched(
        "import time; x = bytearray(600 * 2**20); time.sleep(30)", memory_mb=200
    )
    assert code == -9 and "more than the cap of 200 MB" in why


def test_a_process_bomb_is_killed_at_the_cap():
    code, why = run_watched(
        "import subprocess, time\n"
        "ps = [subprocess.Popen(['sleep', '30']) for _ in range(12)]\ntime.sleep(30)",
        processes=6,
    )
    assert code == -9 and "more than the cap of 6" in why
    time.sleep(0.2)
    leftovers = subprocess.run(
        ["pgrep", "-f", "^sleep 30$"], capture_output=True, text=True
    ).stdout.split()
    assert not leftovers, "every process of the tree is killed"


def test_a_thread_bomb_is_killed_at_the_cap():
    code, why = run_watched(
        "import threading, time\n"
        "for _ in range(40): threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
        "time.sleep(30)",
        threads=20,
    )
    assert code == -9 and "threads, more than the cap of 20" in why


def test_kill_stops_the_tree_and_keeps_the_first_reason():
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True
    )
    watch = KernelWatch(child.pid, 0, 0)
    watch.kill("the notebook ran past its wall clock")
    watch.kill("something later")
    assert child.wait(timeout=10) == -9 and watch.reason == "the notebook ran past its wall clock"


def test_an_honest_process_under_the_caps_is_left_alone():
    code, why = run_watched(
        "import time; x = bytearray(20 * 2**20); time.sleep(0.5)", memory_mb=500, processes=4
    )
    assert code == 0 and why is None


def test_caps_come_from_the_environment(monkeypatch):
    monkeypatch.setenv(limits.MEMORY_ENV, "100")
    monkeypatch.setenv(limits.PROCESSES_ENV, "0")
    monkeypatch.setenv(limits.THREADS_ENV, "7")
    assert limits.caps() == (100 * 2**20, 0, 7)
    monkeypatch.setenv(limits.MEMORY_ENV, "lots")
    with pytest.raises(ValueError, match="whole number"):
        limits.caps()
