"""A real Odoo (18 or 19) on this machine, started for the HTTP benchmarks and the prefork tests, and a web client.

`OdooServer` installs ai_mcp into a new database and starts odoo-bin on it (threaded or prefork)
from ODOO_BIN or /opt/odoo<series>/odoo-bin (AI_MCP_ODOO_SERIES, 18 by default), run by ODOO_PYTHON
or the .venv next to it (scripts/test passes ODOO_BIN for an Odoo that scripts/lib.sh found
elsewhere or made). `WebClient` is a logged-in
browser session as the chat widget uses it: session cookie, CSRF token, JSON-RPC, and the SSE chat
stream read event by event.
"""

from __future__ import annotations

import contextlib
import copy
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from services.sse import SseDecoder, SseEvent
from testing.mcp_servers import free_port

ROOT = Path(__file__).resolve().parents[1]
SERIES = os.environ.get("AI_MCP_ODOO_SERIES") or "18"
DEFAULT_ODOO_BIN = f"/opt/odoo{SERIES}/odoo-bin"
RELEASE_MAJOR = re.compile(r"^version_info = \((\d+),", re.MULTILINE)


class OdooNotFound(RuntimeError):
    """No odoo-bin to start: the message says which variable to set."""


def odoo_series(command: list[str]) -> int:
    """The major version of the Odoo that `command` (as find_odoo gives it) starts."""
    if command[1:2] != ["-m"]:
        release = Path(command[1]).resolve().parent / "odoo" / "release.py"
        if release.exists() and (found := RELEASE_MAJOR.search(release.read_text())):
            return int(found.group(1))
    done = subprocess.run(
        [command[0], "-c", "import odoo.release as r; print(r.version_info[0])"],
        capture_output=True,
        text=True,
        check=True,
        cwd="/" if command[1:2] == ["-m"] else str(Path(command[1]).resolve().parent),
    )
    return int(done.stdout.strip())


def find_odoo() -> tuple[list[str], str | None]:
    """(how to start Odoo, its addons folder when separate): ODOO_BIN (scripts/test sets it to
    what scripts/lib.sh found or made), else /opt/odoo<AI_MCP_ODOO_SERIES>/odoo-bin, each run by
    ODOO_PYTHON or the .venv next to it; else `python -m odoo` of ODOO_PYTHON. OdooNotFound
    otherwise."""
    odoo_bin = os.environ.get("ODOO_BIN") or (DEFAULT_ODOO_BIN if os.path.isfile(DEFAULT_ODOO_BIN) else "")
    python = os.environ.get("ODOO_PYTHON")
    if odoo_bin:
        if not os.path.isfile(odoo_bin):
            raise OdooNotFound(f"ODOO_BIN={odoo_bin} does not exist")
        root = Path(odoo_bin).resolve().parent
        venv = root / ".venv/bin/python"
        addons = root / "addons"
        separate = addons.is_dir() and (root / "odoo" / "release.py").exists()
        return [python or (str(venv) if venv.exists() else sys.executable), odoo_bin], str(addons) if separate else None
    if python:
        found = subprocess.run(
            [
                python,
                "-c",
                "import os, odoo.release as r; print(r.version_info[0], os.path.dirname(os.path.dirname(r.__file__)))",
            ],
            capture_output=True,
            text=True,
            check=False,
            cwd="/",
        )
        major, _, root = found.stdout.strip().partition(" ")
        if found.returncode == 0 and major in ("18", "19"):
            addons = Path(root) / "addons"
            return [python, "-m", "odoo"], str(addons) if (addons / "web").is_dir() else None
    raise OdooNotFound(
        f"no Odoo {SERIES}: no ODOO_BIN, no {DEFAULT_ODOO_BIN}, no odoo package importable by ODOO_PYTHON"
    )


def wait_until_serving(process: subprocess.Popen[bytes], port: int, log: str, timeout: float) -> None:
    """Return once /web/login answers 200 on the port; RuntimeError if Odoo died or never answered."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"odoo exited with {process.returncode}; see {log}")
        with contextlib.suppress(OSError, http.client.HTTPException):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/web/login")
            if conn.getresponse().status == 200:
                return
        time.sleep(0.3)
    raise RuntimeError(f"odoo did not answer on port {port} within {timeout:.0f} s; see {log}")


def stop_process(process: subprocess.Popen[bytes] | None, grace: float) -> None:
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


class OdooServer:
    """One new database holding ai_mcp (no demo data); odoo-bin started on it, one mode at a time."""

    def __init__(
        self, name: str, ready_timeout: float = 120.0, module: Path = ROOT, env: dict[str, str] | None = None
    ) -> None:
        """`env`: more environment variables of every process started (e.g. PGHOST and PGPORT of a
        PostgreSQL of the test's own, testing/postgres.py)."""
        self.command, odoo_addons = find_odoo()
        self.extra_env = dict(env or {})
        self.series = odoo_series(self.command)
        self.ready_timeout = ready_timeout
        self.tmp = Path(tempfile.mkdtemp(prefix=f"ai_mcp-{name}."))
        (self.tmp / "addons").mkdir()
        self.overlay: Path | None = None
        self.use_module(module)
        self.addons_path = ",".join(filter(None, [odoo_addons, str(self.tmp / "addons")]))
        self.db = f"ai_mcp_{name.replace('-', '_')}_{os.getpid()}"
        self.port = free_port()
        self.gevent_port: int | None = None
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.log: Path = self.tmp / "install.log"

    def use_module(self, module: Path, overlay: Path | None = None) -> None:
        """Serve `module` (a folder holding some version of ai_mcp) as ai_mcp from now on, with
        `overlay` (the packages that version needs and Odoo's Python lacks, as made by
        testing/requirements_overlay.py) first on the path of every Odoo process started."""
        link = self.tmp / "addons" / "ai_mcp"
        link.unlink(missing_ok=True)
        link.symlink_to(module)
        self.overlay = overlay

    def environ(self) -> dict[str, str]:
        """The environment of an Odoo process: this one's, with the module's overlay first on PYTHONPATH."""
        env = {**os.environ, **self.extra_env}
        if self.overlay is not None:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(self.overlay), env.get("PYTHONPATH", "")]))
        return env

    def args(self, log: Path, http_port: int | None = None) -> list[str]:
        """odoo-bin's options for this database, serving on `http_port` (default: `port`)."""
        return [
            *self.command,
            f"--addons-path={self.addons_path}",
            f"--data-dir={self.tmp / 'data'}",
            "-d",
            self.db,
            f"--db-filter=^{self.db}$",
            "--http-interface=127.0.0.1",
            f"--http-port={http_port or self.port}",
            "--max-cron-threads=0",
            f"--logfile={log}",
        ]

    def install(self, *more: str) -> None:
        """`-i ai_mcp`, with the modules `more` names beside it (Odoo's own apps, e.g. crm)."""
        done = subprocess.run(
            # without demo data: 19 makes none unless asked (--with-demo), 18 unless told not to
            [
                *self.args(self.log),
                "-i",
                ",".join(("ai_mcp", *more)),
                *(["--without-demo=all"] if self.series == 18 else []),
                "--stop-after-init",
            ],
            check=False,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=self.environ(),
        )
        if done.returncode:
            log = self.log.read_text(errors="replace") if self.log.exists() else ""
            tail = (done.stdout.decode(errors="replace") + log)[-3000:]
            raise RuntimeError(f"installing ai_mcp failed with exit {done.returncode}:\n{tail}")

    def update(self, log: Path) -> subprocess.CompletedProcess[bytes]:
        """`-u ai_mcp` as an operator runs it after pulling a new version."""
        return subprocess.run(
            [*self.args(log), "-u", "ai_mcp", "--stop-after-init"],
            check=False,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=self.environ(),
        )

    def shell(self, script: str) -> str:
        """What `script` prints when `odoo-bin shell` runs it on the database (as `env`)."""
        done = subprocess.run(
            [
                *self.command,
                "shell",
                f"--addons-path={self.addons_path}",
                f"--data-dir={self.tmp / 'data'}",
                "-d",
                self.db,
                "--no-http",
                f"--logfile={self.tmp / 'shell.log'}",
            ],
            input=script.encode(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            check=False,
            env=self.environ(),
        )
        if done.returncode:
            raise RuntimeError(
                f"odoo shell exited with {done.returncode}: {done.stdout.decode(errors='replace')[-2000:]}"
            )
        return done.stdout.decode()

    def start(self, label: str, workers: int = 0, extra: tuple[str, ...] = ()) -> None:
        """Threaded with workers=0; prefork otherwise, its gevent worker on `gevent_port`."""
        self.log = self.tmp / f"odoo-{label}.log"
        mode = ["--workers=0"]
        self.gevent_port = None
        if workers:
            self.gevent_port = free_port()
            mode = [f"--workers={workers}", f"--gevent-port={self.gevent_port}"]
        # what Odoo prints before its logging is set up (a gevent worker that cannot import) goes here
        output = self.log.with_suffix(".out")
        with open(output, "wb") as out:
            self.process = subprocess.Popen(
                [*self.args(self.log), *mode, *extra], stdout=out, stderr=subprocess.STDOUT, env=self.environ()
            )
        where = f"{self.log} and {output}"
        try:
            wait_until_serving(self.process, self.port, where, self.ready_timeout)
            if self.gevent_port:
                # the master starts the gevent worker after the HTTP workers: wait for it too
                wait_until_serving(self.process, self.gevent_port, where, self.ready_timeout)
        except RuntimeError as exc:
            self.stop()
            tail = output.read_text(errors="replace").strip().splitlines()[-5:]
            raise RuntimeError("\n".join([str(exc), *tail])) from None

    def stop(self, grace: float = 30) -> None:
        stop_process(self.process, grace)
        self.process = None

    def drop(self) -> None:
        # --force: workers that are still exiting may hold connections
        subprocess.run(
            ["dropdb", "--if-exists", "--force", self.db], check=False, stderr=subprocess.DEVNULL, env=self.environ()
        )

    def close(self, keep_logs: Path | None = None) -> None:
        self.stop()
        self.drop()
        if keep_logs:
            keep_logs.mkdir(parents=True, exist_ok=True)
            for log in [*self.tmp.glob("*.log"), *self.tmp.glob("*.out")]:
                shutil.copy(log, keep_logs / log.name)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def log_errors(self) -> list[str]:
        """ERROR and CRITICAL records of the running mode's log, each with the traceback that follows
        it: the log is gone with the test's folder, and a failing test's message is all that stays."""
        if not self.log.exists():
            return []
        records: list[str] = []
        following = False  # the lines after an error record, up to the next record, are its traceback
        for line in self.log.read_text(errors="replace").splitlines():
            if re.search(r"^\S+ \S+ \d+ (ERROR|CRITICAL) ", line):
                records.append(line)
                following = True
            elif re.match(r"^\d{4}-\d\d-\d\d ", line):
                following = False
            elif following:
                records[-1] += "\n" + line
        return records


class WebClient:
    """A logged-in web session (cookie, CSRF token) on one Odoo port."""

    def __init__(self, url: str, db: str, login: str, password: str, timeout: float = 120) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.timeout = timeout
        self.cookie = ""
        # sent with every request (e.g. to steer a load balancer); see with_headers()
        self.headers: dict[str, str] = {}
        # the response headers of the last get() or jsonrpc() (a stream's are in its result)
        self.last_headers: dict[str, str] = {}
        if not self.jsonrpc("/web/session/authenticate", {"db": db, "login": login, "password": password}).get("uid"):
            raise RuntimeError(f"cannot log in as {login}")
        match = re.search(r'csrf_token: "([^"]+)"', self.get("/odoo")[1])
        if not match:
            raise RuntimeError("no csrf_token in /odoo")
        self.csrf = match.group(1)
        self.series = int(self.jsonrpc("/web/webclient/version_info", {})["server_version_info"][0])

    @property
    def groups_field(self) -> str:
        """The res.users field a user's groups are written to: renamed in Odoo 19."""
        return "groups_id" if self.series == 18 else "group_ids"

    def with_headers(self, headers: dict[str, str]) -> WebClient:
        """The same session (cookie, CSRF token) sending `headers` with every request too."""
        other = copy.copy(self)
        other.headers = {**self.headers, **headers}
        other.last_headers = {}
        return other

    def connection(self, port: int | None = None, timeout: float | None = None) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, port or self.port, timeout=timeout or self.timeout)

    def get(self, path: str, port: int | None = None) -> tuple[int, str]:
        conn = self.connection(port)
        conn.request("GET", path, headers={**self.headers, "Cookie": self.cookie})
        response = conn.getresponse()
        self.last_headers = dict(response.getheaders())
        body = response.read().decode()
        conn.close()
        return response.status, body

    def jsonrpc(self, path: str, params: dict):
        conn = self.connection()
        conn.request(
            "POST",
            path,
            json.dumps({"jsonrpc": "2.0", "method": "call", "params": params}),
            headers={**self.headers, "Content-Type": "application/json", "Cookie": self.cookie},
        )
        response = conn.getresponse()
        self.last_headers = dict(response.getheaders())
        cookie = response.getheader("Set-Cookie")
        if cookie and "session_id=" in cookie:
            self.cookie = cookie.split(";", 1)[0]
        data = json.loads(response.read())
        conn.close()
        if "error" in data:
            raise RuntimeError(data["error"].get("data", {}).get("message") or data["error"])
        return data["result"]

    def call(self, model: str, method: str, *args, **kwargs):
        return self.jsonrpc(
            f"/web/dataset/call_kw/{model}/{method}",
            {"model": model, "method": method, "args": list(args), "kwargs": kwargs},
        )

    def stream(
        self,
        body: dict,
        *,
        path: str = "/ai_mcp/chat/stream",
        port: int | None = None,
        timeout: float | None = None,
        until: Callable[[SseEvent], bool] | None = None,
    ) -> dict:
        """POST one SSE stream as the chat widget does; read it to its end, or until `until(event)` is
        true and then drop the connection as a closed browser tab does.

        Returns {"status", "headers", "events": [(seconds since sending, SseEvent)], "error", "total"};
        a connection failure is in "error", not raised.
        """
        result: dict = {"status": None, "headers": {}, "events": [], "error": None}
        started = time.perf_counter()
        try:
            conn = self.connection(port, timeout)
            conn.request(
                "POST",
                path,
                json.dumps(body),
                headers={
                    **self.headers,
                    "Content-Type": "application/json",
                    "Cookie": self.cookie,
                    "X-CSRF-Token": self.csrf,
                },
            )
            response = conn.getresponse()
            result["status"] = response.status
            result["headers"] = dict(response.getheaders())
            if response.status != 200:
                result["error"] = response.read().decode(errors="replace")[:300]
                return result
            self._read_events(response, started, result, until)
            conn.close()
        except (OSError, http.client.HTTPException) as exc:
            result["error"] = f"{type(exc).__name__}: {exc}"
        result["total"] = time.perf_counter() - started
        return result

    @staticmethod
    def _read_events(
        response: http.client.HTTPResponse, started: float, result: dict, until: Callable[[SseEvent], bool] | None
    ) -> None:
        decoder = SseDecoder()
        while chunk := response.read1(65536):
            now = time.perf_counter() - started
            for event in decoder.feed(chunk):
                result["events"].append((now, event))
                if until is not None and until(event):
                    return


def create_ai_user(admin: WebClient, login: str, name: str | None = None) -> int:
    """A user of the AI chat (an internal user in the AI User group) whose password is its login."""
    groups = admin.call(
        "ir.model.data",
        "search_read",
        [
            ("model", "=", "res.groups"),
            ("module", "in", ["base", "ai_mcp"]),
            ("name", "in", ["group_user", "group_ai_user"]),
        ],
        ["res_id"],
    )
    values = {"name": name or login, "login": login, "password": login}
    return admin.call("res.users", "create", {**values, admin.groups_field: [(6, 0, [g["res_id"] for g in groups])]})


def create_scripted_provider(admin: WebClient, base_url: str, api_key: str) -> int:
    """An AI provider whose model is the scripted one at `base_url` (testing/scripted_llm.py)."""
    values = {"name": "scripted", "base_url": base_url, "api_key": api_key, "default_model": "scripted"}
    return admin.call("ai.provider", "create", values)
