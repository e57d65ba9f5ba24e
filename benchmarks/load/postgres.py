"""A PostgreSQL of one benchmark run, allowing more connections than this machine's shared one."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from pathlib import Path

from testing.mcp_servers import free_port


class PrivatePostgres:
    """A PostgreSQL cluster of this run only, allowing `max_connections`: the shared server of this
    machine allows 100, fewer than the pools of a gevent worker sized for 200 streams. Odoo, dropdb
    and psql find it through PGHOST/PGPORT/PGUSER. initdb refuses root, so it runs as `postgres`."""

    BIN = Path("/usr/lib/postgresql/15/bin")
    OS_USER = "postgres"

    def __init__(self, tmp: Path, max_connections: int) -> None:
        self.dir = tmp / "pg"
        self.dir.mkdir()
        self.port = free_port()
        self.log = tmp / "pg.log"
        # the run's folder (mode 0700) holds its cluster, socket and log
        shutil.chown(tmp, user=self.OS_USER)
        shutil.chown(self.dir, user=self.OS_USER)
        self._as_postgres([str(self.BIN / "initdb"), "-D", str(self.dir), "-U", "root", "-A", "trust", "--no-sync"])
        self._as_postgres(
            [
                str(self.BIN / "pg_ctl"),
                "-D",
                str(self.dir),
                "-l",
                str(self.log),
                "-w",
                "start",
                "-o",
                f"-p {self.port} -k {self.dir} -c listen_addresses='' -c max_connections={max_connections}"
                " -c fsync=off -c shared_buffers=256MB",
            ]
        )
        self.env = {"PGHOST": str(self.dir), "PGPORT": str(self.port), "PGUSER": "root"}

    def _as_postgres(self, command: list[str]) -> None:
        subprocess.run(["runuser", "-u", self.OS_USER, "--", *command], check=True, stdout=subprocess.DEVNULL)

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._as_postgres([str(self.BIN / "pg_ctl"), "-D", str(self.dir), "-m", "fast", "-w", "stop"])
