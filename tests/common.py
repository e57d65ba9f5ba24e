"""Users, records and helpers shared by the model, security and sync tests."""

import os
import shutil
import time
import unittest
from contextlib import nullcontext
from pathlib import Path

from odoo.tests import TransactionCase, new_test_user

from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.models.server.list_watch import wait_for_background_syncs
from odoo.addons.ai_mcp.odoo_compat import allow_every_request
from odoo.addons.ai_mcp.testing.mcp_servers import HttpServer

# A public address: saving a user server with it needs no DNS and passes the URL guard.
PUBLIC_URL = "https://93.184.216.34/mcp"
DEAD_SYSTEM_URL = "http://127.0.0.1:9/mcp"
# MCP's reference server (@modelcontextprotocol/server-everything), package.json's devDependency
EVERYTHING = (
    Path(__file__)
    .resolve()
    .parents[1]
    .joinpath("node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
)


class AiMcpCase(TransactionCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = cls.env(context=dict(cls.env.context, tracking_disable=True, mail_notrack=True))
        # export rights too, so that the export path is tested for secrets
        user_groups = "base.group_user,base.group_allow_export,ai_mcp.group_ai_user"
        cls.manager = new_test_user(
            cls.env, "ai_manager", groups=f"{user_groups},ai_mcp.group_ai_manager", name="AI Manager"
        )
        cls.user1 = new_test_user(cls.env, "ai_user1", groups=user_groups, name="AI User 1")
        cls.user2 = new_test_user(cls.env, "ai_user2", groups=user_groups, name="AI User 2")
        cls.member = new_test_user(cls.env, "ai_member", groups=user_groups, name="Member")
        cls.outsider = new_test_user(cls.env, "no_ai", groups="base.group_user", name="Not an AI user")
        cls.admin = cls.env.ref("base.user_admin")
        cls.Server = cls.env["mcp.server"]
        cls.Tool = cls.env["mcp.tool"]
        cls.Service = cls.env["cloud.service"]
        cls.set_param("ai_mcp.allowed_hosts", False)
        cls.set_param("ai_mcp.allow_stdio", "False")

    @classmethod
    def set_param(cls, key, value):
        cls.env["ir.config_parameter"].sudo().set_param(key, value)

    @classmethod
    def system_server(cls, name="System", **values):
        return cls.Server.create({"name": name, "scope": "system", "url": DEAD_SYSTEM_URL, **values})

    @classmethod
    def service_of(cls, user, name="Service", members=()):
        return (
            cls.Service.with_user(user).create({"name": name, "member_ids": [(6, 0, [m.id for m in members])]}).sudo()
        )

    @classmethod
    def user_server(cls, service, name="Mine", **values):
        owner = service.owner_id
        return (
            cls.Server.with_user(owner)
            .create({"name": name, "scope": "user", "cloud_service_id": service.id, "url": PUBLIC_URL, **values})
            .sudo()
        )

    @classmethod
    def tool(cls, server, name, **values):
        """A discovered tool, approved, as a sync leaves it."""
        values = {
            "name": name,
            "server_id": server.id,
            "content_hash": f"h-{name}",
            "approved_hash": f"h-{name}",
            "description": f"{name} tool",
            "requires_approval": False,
            "input_schema": '{"type": "object", "properties": {}}',
            **values,
        }
        return cls.Tool.sudo().create(values)

    # -- real MCP servers ------------------------------------------------------------------------
    # free_port() releases the port before the server binds it, so when several test runs share a
    # machine another process may take it first: HttpServer.start() would then happily connect to
    # that process. These helpers wait until our own process listens, and pick another port if not.

    @classmethod
    def start_server(cls, *extra, transport="streamable-http"):
        """A started test server; the caller stops it."""
        for _attempt in range(5):
            http = HttpServer(transport, *extra)
            if _start_own(http):
                return http
            http.stop()
        raise RuntimeError("could not start a test MCP server on a port of its own")

    def serve(self, *extra, transport="streamable-http"):
        """A started test server, stopped when the test ends."""
        http = self.start_server(*extra, transport=transport)
        self.addCleanup(http.stop)
        return http

    def restart_with(self, http, server, *extra):
        """Restart `http` with other arguments, on its port if still free, else on a new one
        (then `server` is pointed at it). Returns the running HttpServer."""
        http.stop()
        http.extra = extra
        if _start_own(http):
            return http
        http.stop()
        fresh = self.serve(*extra, transport=http.transport)
        server.url = fresh.url
        return fresh

    def close_pooled(self, *servers):
        hub = running_hub()
        if hub is not None:
            for server in servers:
                hub.run(hub.aclose_server(server._server_key()))


def _start_own(http, timeout=20.0):
    """Start `http`; True once its own process listens on its port, False if it could not."""
    try:
        http.start()
    except RuntimeError:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if http.process.poll() is not None:
            return False
        if _listens(http.process.pid, http.port):
            return True
        time.sleep(0.05)
    return False


def _listens(pid, port):
    """Whether process `pid` holds a listening TCP socket on `port` (Linux /proc)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            return True  # no /proc: trust the connect HttpServer.start() made
        for row in rows:
            fields = row.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            return True
    return False


def require_browser(case):
    """Odoo's browser tests skip silently without websocket-client or a Chromium: fail instead,
    unless AI_MCP_BROWSER_OPTIONAL says a machine without a browser is expected."""
    if os.environ.get("AI_MCP_BROWSER_OPTIONAL"):
        return
    try:
        import websocket  # noqa: F401
    except ImportError:
        case.fail("websocket-client is not installed: the browser tour would be skipped silently")
    if not any(shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome", "chrome")):
        case.fail("no Chromium or Chrome on PATH: the browser tour would be skipped silently")


def node_or_skip():
    """The node that runs MCP's reference server; skips the test where there is none."""
    node = shutil.which("node")
    if node is None:
        raise unittest.SkipTest("node is not installed: MCP's reference server (server-everything) runs on it")
    if not EVERYTHING.is_file():
        raise AssertionError(f"{EVERYTHING} is missing: `npm ci` installs package.json's devDependencies")
    return node


def reference_server(env):
    """MCP's reference server, registered and synced by an administrator as a stdio server run by
    node (in `env`, as the test's records are); close its session with the test's."""
    node = node_or_skip()
    env["ir.config_parameter"].sudo().set_param("ai_mcp.allow_stdio", "True")
    admin = env.ref("base.user_admin")
    values = {
        "name": "Everything",
        "scope": "system",
        "transport": "stdio",
        "command": node,
        "args": f"{EVERYTHING}\nstdio",
    }
    server = env["mcp.server"].with_user(admin).create(values)
    result = server._sync_tools()
    assert not result.get("error"), result
    return server.with_env(env)


def let_background_syncs_end(case, test_lock_held=True):
    """Wait for the tool syncs a server's `list_changed` started in the background (MCP's reference
    server announces one on every connection): they run on the test's cursor, so the test's own
    queries and its rollback must not overlap them. Odoo 19's HTTP tests hold the test lock the
    sync needs, so it is let go meanwhile unless the test released it already."""
    allowed = allow_every_request(case) if test_lock_held else None
    with allowed if allowed is not None else nullcontext():
        case.assertTrue(wait_for_background_syncs(), "a background tool sync did not end")
