"""A throwaway PostgreSQL server for the tests: Debian's binaries, a loopback port, a temp folder.

``Server().start()`` sets ``url``, a running server's: ``$BERTLAB_TEST_POSTGRES`` if set (any
server the tests may create databases on), else one started here with ``initdb`` and ``pg_ctl``
from ``/usr/lib/postgresql/<version>/bin`` (Debian's ``postgresql`` package, which ``.ci/run``
installs), run as the ``postgres`` user when the tests run as root (PostgreSQL refuses root,
and CI runs as root for the hub's system users: pytest-postgresql's ``postgresql_proc`` runs
``pg_ctl`` as the current user, so it cannot serve here). Where no server can start, it sets
``why`` instead, a skip's reason that CI fails (:mod:`required`). ``database()`` makes an empty
database on it; ``stop()`` stops it and removes its files.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import required
from loopback import free_port

ENV_VAR = "BERTLAB_TEST_POSTGRES"


def _bin(name: str) -> str | None:
    found = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4])
    )
    return found[-1] if found else shutil.which(name)


class Server:
    def __init__(self):
        self.url, self.why, self._stop = None, None, None

    def start(self) -> "Server":
        if os.environ.get(ENV_VAR):
            self.url = os.environ[ENV_VAR].rstrip("/")
            return self
        initdb, pg_ctl = _bin("initdb"), _bin("pg_ctl")
        if not initdb or not pg_ctl:
            self.why = required.reason(
                "postgres",
                "no PostgreSQL server binaries (apt install postgresql; .ci/run installs it)",
            )
            return self
        run_as: list[str] = []
        folder = Path(
            tempfile.mkdtemp(
                prefix="bertlab-pg-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None
            )
        )
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                self.why = required.reason(
                    "postgres", "running as root and there is no postgres user to run the server as"
                )
                return self
            os.chown(folder, user.pw_uid, user.pw_gid)
            run_as = ["runuser", "-u", "postgres", "--"]
        port, data = free_port(), folder / "data"
        try:
            subprocess.run(
                run_as + [initdb, "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"],
                check=True,
                capture_output=True,
                text=True,
                timeout=120,
            )
            subprocess.run(
                run_as
                + [
                    pg_ctl,
                    "-D",
                    str(data),
                    "-l",
                    str(folder / "log"),
                    "-w",
                    "-t",
                    "60",
                    "-o",
                    f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off",
                    "start",
                ],
                check=True,
                capture_output=True,
                text=True,
                timeout=120,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
            log = (folder / "log").read_text() if (folder / "log").is_file() else ""
            self.why = required.reason(
                "postgres",
                f"could not start PostgreSQL: {getattr(exc, 'stderr', '') or exc} {log[-500:]}",
            )
            return self
        self.url = f"postgresql+psycopg2://postgres@127.0.0.1:{port}"
        self._stop = run_as + [pg_ctl, "-D", str(data), "-m", "immediate", "stop"], folder
        return self

    def database(self) -> str:
        """A new, empty database on the server; its URL."""
        import sqlalchemy

        name = f"bertlab_{uuid.uuid4().hex[:12]}"
        engine = sqlalchemy.create_engine(f"{self.url}/postgres", isolation_level="AUTOCOMMIT")
        with engine.connect() as connection:
            connection.execute(sqlalchemy.text(f'CREATE DATABASE "{name}"'))
        engine.dispose()
        return f"{self.url}/{name}"

    def stop(self) -> None:
        if self._stop:
            command, folder = self._stop
            subprocess.run(command, capture_output=True, timeout=60)
            shutil.rmtree(folder, ignore_errors=True)
