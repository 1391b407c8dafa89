"""The machine a recipe ran on, as its manifest records it (the model card and Chapters 6b and 7 quote it)."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import torch


def hardware(device: str = "cpu") -> str:
    """E.g. "AMD EPYC, 2 CPU cores, no GPU, torch 2.13.0": the machine the run was exported on,
    and the GPU when the run's last stage trained on one (``device``, as the checkpoint records it)."""
    name = platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    gpu = (
        torch.cuda.get_device_name()
        if device.startswith("cuda") and torch.cuda.is_available()
        else None
    )
    gpu = gpu or ("a CUDA GPU" if device.startswith("cuda") else "no GPU")
    return f"{name}, {os.cpu_count()} CPU cores, {gpu}, torch {torch.__version__}"
