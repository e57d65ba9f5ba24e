"""Several Odoo 18 nodes on one database behind nginx, started for the multi-node tests and benchmarks.

`OdooCluster` installs ai_mcp into a new database (an `OdooServer`), then starts on it `nodes`
prefork Odoo nodes (each `--workers=2` and its gevent worker), `extra_gevent` more chat-stream
processes (`odoo-bin gevent`, the n-th one beside node n % nodes), and nginx in front of them:

    with OdooCluster("two-nodes", nodes=2, options={"turn_stale_after": 12}) as cluster:
        admin = WebClient(cluster.url, cluster.db, "admin", "admin")
        cluster.nodes[1].http_port, cluster.nodes[1].gevent_port
        cluster.kill(0)
        cluster.kill_extra(0); cluster.restart_extra(0)

What an operator deploys is what runs: every Odoo process reads deploy/odoo-node.conf (without its
database connection lines: PostgreSQL is local here; with `options` as its `[ai_mcp]` section) and
gets the database, paths and ports on its command line, which Odoo lets win over the file; nginx
runs deploy/nginx.conf with this cluster's ports in place of its `server` and `listen` lines. All
nodes share one --data-dir, as nodes share a network folder: sessions and filestore. Each node is
a process group of its own (its master, HTTP workers, gevent worker and extra gevent processes):
`kill(i)` ends it with SIGKILL, as a machine that dies.

Which process answered through nginx: the rendered configuration adds the response header
`X-Upstream` ($upstream_addr); `served_by(headers)` names the node and the kind of process. A header
is used rather than asking `/ai_mcp/hub/stats` for its pid afterwards because it comes with the
response itself (a stream, a JSON call, a page), while a second request may be balanced to another
process. To send a request to one node through nginx, the rendered upstreams balance by the hash of
a request header when it is there (round robin without it): `pin(i)` gives the headers that lead to
node i, its HTTP workers and its own gevent worker; `WebClient.with_headers(pin(i))` sends them.
"""

from __future__ import annotations

import configparser
import contextlib
import http.client
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from testing.mcp_servers import free_port
from testing.odoo_http import ROOT, OdooServer, wait_until_serving

DEPLOY = ROOT / "deploy"
NGINX_TEMPLATE = DEPLOY / "nginx.conf"
NODE_TEMPLATE = DEPLOY / "odoo-node.conf"
DEFAULT_NGINX = "/usr/sbin/nginx"
UPSTREAM_HEADER = "X-Upstream"
PIN_HEADER = "X-Ai-Mcp-Node"
WORKERS = 2
# what the tests leave out of deploy/odoo-node.conf: the database connection of a real deployment
DB_CONNECTION = frozenset({"db_host", "db_port", "db_user", "db_password", "db_sslmode"})


class NginxNotFound(RuntimeError):
    """No nginx to start: the message says which variable to set."""


def find_nginx() -> str:
    """NGINX, else nginx on PATH, else /usr/sbin/nginx; NginxNotFound otherwise."""
    found = os.environ.get("NGINX") or shutil.which("nginx") or DEFAULT_NGINX
    if not os.access(found, os.X_OK):
        raise NginxNotFound(f"no nginx: set NGINX to its path (looked for {found})")
    return found


# -- the deploy/ files, rendered -----------------------------------------------------------------


def render_nginx(
    template: str,
    upstreams: dict[str, Sequence[str]],
    listen: str,
    upstream_lines: Sequence[str] = (),
    server_lines: Sequence[str] = (),
) -> str:
    """`template` (deploy/nginx.conf) with the `server` lines of each upstream named in `upstreams`
    replaced by its addresses (and `upstream_lines` added there), and its one `listen` line by
    `listen` (and `server_lines` after it). ValueError when the template has not the shape this
    relies on, so that a changed deploy file fails here rather than runs something else."""
    out: list[str] = []
    current: str | None = None
    replaced: set[str] = set()
    listens = 0
    for line in template.splitlines():
        stripped = line.split("#", 1)[0].strip()
        indent = line[: len(line) - len(line.lstrip())]
        opening = re.fullmatch(r"upstream\s+(\S+)\s*\{", stripped)
        if opening:
            current = opening.group(1)
        elif current is not None and stripped == "}":
            current = None
        elif current in upstreams and re.match(r"server\s", stripped):
            if current not in replaced:
                replaced.add(current)
                out += [f"{indent}server {address};" for address in upstreams[current]]
                out += [f"{indent}{extra}" for extra in upstream_lines]
            continue
        elif re.match(r"listen\s", stripped):
            listens += 1
            out.append(f"{indent}listen {listen};")
            out += [f"{indent}{extra}" for extra in server_lines]
            continue
        out.append(line)
    missing = set(upstreams) - replaced
    if missing or listens != 1:
        raise ValueError(f"nginx template: upstreams without server lines {sorted(missing)}, {listens} listen lines")
    return "\n".join(out) + "\n"


def render_node_conf(template: str, options: dict[str, object]) -> str:
    """`template` (deploy/odoo-node.conf) without its database connection lines, with `options` as
    the values of its `[ai_mcp]` section (added to it when missing)."""
    out: list[str] = []
    section = ""
    pending = {str(k): str(v) for k, v in options.items()}

    def flush_ai_mcp() -> None:
        out.extend(f"{name} = {value}" for name, value in pending.items())
        pending.clear()

    for line in template.splitlines():
        header = re.fullmatch(r"\[(.+)\]\s*", line)
        if header:
            if section == "ai_mcp":
                flush_ai_mcp()
            section = header.group(1)
            out.append(line)
            continue
        name = re.match(r"([A-Za-z_]\w*)\s*=", line)
        if name and section == "options" and name.group(1) in DB_CONNECTION:
            continue
        if name and section == "ai_mcp" and name.group(1) in pending:
            out.append(f"{name.group(1)} = {pending.pop(name.group(1))}")
            continue
        out.append(line)
    if pending:
        if section != "ai_mcp":
            out.append("[ai_mcp]")
        flush_ai_mcp()
    rendered = "\n".join(out) + "\n"
    configparser.RawConfigParser().read_string(rendered)  # Odoo reads it with this parser
    return rendered


def nginx_command(nginx: str, folder: Path, server_conf: Path) -> list[str]:
    """How to run nginx in the foreground with `server_conf` (a rendered deploy/nginx.conf) in its
    http context, every path of its own (pid, logs, temp files) under `folder`. Writes the main
    configuration file there."""
    main = folder / "nginx-main.conf"
    temp = "\n".join(
        f"    {kind}_temp_path {folder / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    main.write_text(
        "daemon off;\n"
        + ("user root;\n" if os.geteuid() == 0 else "")  # its workers write the temp files below
        + f"worker_processes 1;\npid {folder / 'nginx.pid'};\nerror_log {folder / 'error.log'} warn;\n"
        + "events { worker_connections 1024; }\n"
        + f"http {{\n    access_log {folder / 'access.log'};\n{temp}\n    include {server_conf};\n}}\n"
    )
    return [nginx, "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(main)]


# -- the cluster ---------------------------------------------------------------------------------


@dataclass
class Node:
    """One Odoo node: a prefork master with its HTTP workers and gevent worker, and the extra gevent
    processes started beside it, all in the master's process group."""

    index: int
    http_port: int
    gevent_port: int
    log: Path
    extra_gevent_ports: list[int] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None
    extras: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def url(self) -> str:
        """The node's HTTP workers, without nginx."""
        return f"http://127.0.0.1:{self.http_port}"


class OdooCluster:
    """`nodes` Odoo nodes on one database and data dir, and nginx in front of them (`url`)."""

    def __init__(
        self,
        name: str,
        nodes: int = 2,
        extra_gevent: int = 0,
        options: dict[str, object] | None = None,
        extra: Sequence[str] = (),
        ready_timeout: float = 180.0,
    ) -> None:
        """`options`: the `[ai_mcp]` section of the nodes' configuration file; `extra`: more
        odoo-bin options for every process (e.g. "--db_maxconn_gevent=240")."""
        self.nginx_bin = find_nginx()
        self.server = OdooServer(name, ready_timeout=ready_timeout)
        self.db = self.server.db
        self.tmp = self.server.tmp
        self.ready_timeout = ready_timeout
        self.options = dict(options or {})
        self.extra = tuple(extra)
        self.nodes = [Node(i, free_port(), free_port(), self.tmp / f"node{i}.log") for i in range(max(1, int(nodes)))]
        for n in range(max(0, int(extra_gevent))):
            self.nodes[n % len(self.nodes)].extra_gevent_ports.append(free_port())
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.node_conf = self.tmp / "odoo-node.conf"
        self.nginx_conf = self.tmp / "nginx" / "odoo.conf"
        self.nginx: subprocess.Popen[bytes] | None = None
        self._pins: dict[tuple[int, str], dict[str, str]] = {}

    # -- life ------------------------------------------------------------------------------------

    def __enter__(self) -> OdooCluster:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def start(self) -> None:
        """Install the module, start every node (at once: they load in parallel), then nginx."""
        self.server.install()
        self.node_conf.write_text(render_node_conf(NODE_TEMPLATE.read_text(), self.options))
        for node in self.nodes:
            self._start_node(node)
        for node in self.nodes:
            self._wait_node(node)
        self._start_nginx()

    def close(self, keep_logs: Path | None = None) -> None:
        for node in self.nodes:
            self._stop_node(node)
        if self.nginx is not None and self.nginx.poll() is None:
            self.nginx.send_signal(signal.SIGQUIT)  # graceful: lets open streams end
            try:
                self.nginx.wait(10)
            except subprocess.TimeoutExpired:
                self.nginx.kill()
                self.nginx.wait(5)
        self.nginx = None
        # nodes are gone: the OdooServer drops the database and the folder (its logs kept on demand)
        if keep_logs:
            keep_logs.mkdir(parents=True, exist_ok=True)
            for log in self.tmp.glob("nginx/*.log"):
                shutil.copy(log, keep_logs / f"nginx-{log.name}")
        self.server.close(keep_logs=keep_logs)

    def kill(self, index: int) -> None:
        """End node `index` at once, as a machine that dies: SIGKILL to its process group (master,
        HTTP workers, gevent worker, its extra gevent processes)."""
        node = self.nodes[index]
        if node.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(node.process.pid, signal.SIGKILL)
        node.process.wait(10)
        for process in node.extras:
            process.wait(10)
        deadline = time.monotonic() + 10
        # forked workers are not our children: wait until none is left in the group
        while time.monotonic() < deadline and _group_alive(node.process.pid):
            time.sleep(0.05)

    def kill_extra(self, index: int, n: int = 0) -> None:
        """End the `n`-th extra chat-stream process beside node `index` at once (SIGKILL), as a
        process the kernel killed; the node's other processes go on."""
        process = self.nodes[index].extras[n]
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait(10)

    def restart_extra(self, index: int, n: int = 0) -> None:
        """Start that extra chat-stream process again, and wait until it serves."""
        node = self.nodes[index]
        node.extras[n] = self._start_extra(node, n)
        wait_until_serving(node.extras[n], node.extra_gevent_ports[n], f"node{index}-gevent{n}.log", self.ready_timeout)

    # -- which process answered ------------------------------------------------------------------

    def served_by(self, headers: dict[str, str]) -> tuple[int, str]:
        """(node index, "http" | "gevent" | "extra") of the process that answered the response with
        these headers through nginx: the last address of X-Upstream (nginx lists each it tried)."""
        value = next((v for k, v in headers.items() if k.lower() == UPSTREAM_HEADER.lower()), "")
        if not value:
            raise LookupError(f"no {UPSTREAM_HEADER} header: the response did not come from a node")
        port = int(value.replace(" : ", ",").split(",")[-1].strip().rsplit(":", 1)[1])
        for node in self.nodes:
            if port == node.http_port:
                return node.index, "http"
            if port == node.gevent_port:
                return node.index, "gevent"
            if port in node.extra_gevent_ports:
                return node.index, "extra"
        raise LookupError(f"{value} is none of this cluster's processes")

    def pin(self, index: int, chat: str = "gevent") -> dict[str, str]:
        """Headers that make nginx send a request to node `index`: to its HTTP workers, and for the
        routes of `upstream odoochat` to its own gevent worker (`chat="gevent"`) or to its first
        extra gevent process (`chat="extra"`). Found by trying keys, once."""
        if (index, chat) not in self._pins:
            for attempt in range(1000):
                headers = {PIN_HEADER: f"n{index}-{chat}-{attempt}"}
                if self._probe("/web/health", headers) == (index, "http") and self._probe(
                    "/ai_mcp/chat/0/events", headers
                ) == (index, chat):
                    self._pins[index, chat] = headers
                    break
            else:
                raise RuntimeError(f"no key of {PIN_HEADER} leads nginx to node {index} ({chat})")
        return self._pins[index, chat]

    def _probe(self, path: str, headers: dict[str, str]) -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            response.read()
            return self.served_by(dict(response.getheaders()))
        finally:
            conn.close()

    def log_errors(self) -> list[str]:
        """ERROR and CRITICAL records of every node's logs."""
        lines: list[str] = []
        for log in sorted(self.tmp.glob("node*.log")):
            lines += [
                f"{log.name}: {line}"
                for line in log.read_text(errors="replace").splitlines()
                if re.search(r"^\S+ \S+ \d+ (ERROR|CRITICAL) ", line)
            ]
        return lines

    # -- inside ----------------------------------------------------------------------------------

    def _odoo(self, node: Node, log: Path, *mode: str) -> list[str]:
        """odoo-bin (`mode` first: "gevent" is read before anything else) with the node's file."""
        command = self.server.command
        options = self.server.args(log, http_port=node.http_port)[len(command) :]
        return [*command, *mode, "-c", str(self.node_conf), *options]

    def _start_node(self, node: Node) -> None:
        args = [*self._odoo(node, node.log), f"--workers={WORKERS}", f"--gevent-port={node.gevent_port}", *self.extra]
        with open(node.log.with_suffix(".out"), "wb") as out:
            # a process group of its own (in this session, so that the extra processes may join it):
            # the group kill() ends, without the test runner in it
            node.process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, process_group=0)
        for n in range(len(node.extra_gevent_ports)):
            node.extras.append(self._start_extra(node, n))

    def _start_extra(self, node: Node, n: int) -> subprocess.Popen[bytes]:
        assert node.process is not None
        log = self.tmp / f"node{node.index}-gevent{n}.log"
        args = [*self._odoo(node, log, "gevent"), f"--gevent-port={node.extra_gevent_ports[n]}", *self.extra]
        with open(log.with_suffix(".out"), "ab") as out:
            return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, process_group=node.process.pid)

    def _wait_node(self, node: Node) -> None:
        assert node.process is not None
        where = f"{node.log} and {node.log.with_suffix('.out')}"
        wait_until_serving(node.process, node.http_port, where, self.ready_timeout)
        # the master starts its gevent worker after the HTTP workers
        wait_until_serving(node.process, node.gevent_port, where, self.ready_timeout)
        for process, port in zip(node.extras, node.extra_gevent_ports, strict=True):
            wait_until_serving(process, port, f"the logs of node{node.index}'s gevent processes", self.ready_timeout)

    def _stop_node(self, node: Node, grace: float = 30) -> None:
        if node.process is None:
            return
        if node.alive:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(node.process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(grace)
        # what did not stop in time (and the group's processes the master no longer waits for)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(node.process.pid, signal.SIGKILL)
        for process in [node.process, *node.extras]:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(10)

    def _start_nginx(self) -> None:
        folder = self.nginx_conf.parent
        folder.mkdir(exist_ok=True)
        upstreams = {
            "odoo": [f"127.0.0.1:{node.http_port}" for node in self.nodes],
            "odoochat": [
                f"127.0.0.1:{port}" for node in self.nodes for port in [node.gevent_port, *node.extra_gevent_ports]
            ],
        }
        self.nginx_conf.write_text(
            render_nginx(
                NGINX_TEMPLATE.read_text(),
                upstreams,
                listen=f"127.0.0.1:{self.port}",
                # the tests' own: a request with the header goes where its hash leads, others round robin
                upstream_lines=[f"hash $http_{PIN_HEADER.lower().replace('-', '_')};"],
                server_lines=[f"add_header {UPSTREAM_HEADER} $upstream_addr always;"],
            )
        )
        command = nginx_command(self.nginx_bin, folder, self.nginx_conf)
        with open(folder / "nginx.out", "wb") as out:
            self.nginx = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.nginx.poll() is not None:
                raise RuntimeError(f"nginx exited with {self.nginx.returncode}: {(folder / 'nginx.out').read_text()}")
            with contextlib.suppress(OSError, http.client.HTTPException, LookupError):
                if self._probe("/web/health", {})[1] == "http":
                    return
            time.sleep(0.1)
        raise RuntimeError(f"nginx did not answer on {self.port} within 30 s; see {folder}")


def _group_alive(pgid: int) -> bool:
    """Whether a process of group `pgid` still runs (a zombie left for init to reap does not)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            # after "(comm)": state, ppid, pgrp
            state, _ppid, pgrp = stat.read_text().rsplit(")", 1)[1].split()[:3]
            if int(pgrp) == pgid and state != "Z":
                return True
    return False
