"""A PostgreSQL cluster of one test or benchmark run, in a folder of its own on a free port.

The machine's shared server is never touched: a test that restarts its database (or a benchmark that
needs more connections than the shared one allows) runs this one, while the other tests, and the
other Odoo series running side by side, keep theirs. Odoo, dropdb and psql find it through the
`env` it gives (PGHOST, PGPORT, PGUSER), which libpq reads.

    postgres = PrivatePostgres(tmp)          # initdb, then start; PostgresNotFound without binaries
    postgres.restart()                       # pg_ctl restart -m fast: every connection is cut
    postgres.stop()

initdb refuses to run as root: as root, every command runs as the `postgres` user, who then owns
the run's folder.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import subprocess
from pathlib import Path

from testing.mcp_servers import free_port

BINARIES = Path("/usr/lib/postgresql")
OS_USER = "postgres"


class PostgresNotFound(RuntimeError):
    """No PostgreSQL server binaries (initdb, pg_ctl) on this machine: the message says where they were looked for."""


def find_bin() -> Path:
    """PG_BIN, else the newest /usr/lib/postgresql/*/bin holding initdb and pg_ctl."""
    if os.environ.get("PG_BIN"):
        candidates = [Path(os.environ["PG_BIN"])]
    else:
        versions = sorted(BINARIES.glob("*/bin"), key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
        candidates = list(reversed(versions))
    for folder in candidates:
        if all(os.access(folder / tool, os.X_OK) for tool in ("initdb", "pg_ctl", "postgres")):
            return folder
    raise PostgresNotFound(
        f"no PostgreSQL server binaries (initdb, pg_ctl): set PG_BIN, or install postgresql (looked in "
        f"{os.environ.get('PG_BIN') or BINARIES / '*/bin'})"
    )


class PrivatePostgres:
    """A cluster in `tmp`/pg, listening on a socket in that folder only, allowing `max_connections`."""

    def __init__(self, tmp: Path, max_connections: int = 100) -> None:
        self.bin = find_bin()
        self.as_root = os.geteuid() == 0
        self.dir = tmp / "pg"
        self.dir.mkdir()
        self.port = free_port()
        self.log = tmp / "pg.log"
        self.superuser = "root" if self.as_root else getpass.getuser()
        self.options = (
            f"-p {self.port} -k {self.dir} -c listen_addresses='' -c max_connections={max_connections}"
            " -c fsync=off -c shared_buffers=128MB"
        )
        if self.as_root:
            # the run's folder (mode 0700) holds its cluster, socket and log
            shutil.chown(tmp, user=OS_USER)
            shutil.chown(self.dir, user=OS_USER)
        self._run("initdb", "-D", str(self.dir), "-U", self.superuser, "-A", "trust", "--no-sync")
        self._pg_ctl("start")
        self.env = {"PGHOST": str(self.dir), "PGPORT": str(self.port), "PGUSER": self.superuser}

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bin / tool), *args]
        if self.as_root:
            command = ["runuser", "-u", OS_USER, "--", *command]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)

    def _pg_ctl(self, action: str, *args: str) -> None:
        self._run("pg_ctl", "-D", str(self.dir), "-l", str(self.log), "-w", "-o", self.options, *args, action)

    def restart(self) -> None:
        """pg_ctl restart -m fast: every session is ended at once (open transactions rolled back),
        the server starts again and accepts connections when this returns."""
        self._pg_ctl("restart", "-m", "fast")

    def psql(self, db: str, query: str) -> str:
        """What `query` prints (unaligned, tuples only) on database `db` of this cluster."""
        command = ["psql", "-X", "-At", "-d", db, "-c", query]
        done = subprocess.run(command, capture_output=True, text=True, check=True, env={**os.environ, **self.env})
        return done.stdout.strip()

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run("pg_ctl", "-D", str(self.dir), "-m", "fast", "-w", "stop")
