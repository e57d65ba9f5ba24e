"""What the chat tests share: a scripted LLM, a real FastMCP server over streamable HTTP, an
assistant bound to it, users, and an SSE client reading the routes as a browser would."""

import json
import shutil
import socket
import tempfile
import time
import types
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import odoo
from odoo.tests import HttpCase, new_test_user

from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.odoo_compat import allow_every_request
from odoo.addons.ai_mcp.services.sse import SseDecoder
from odoo.addons.ai_mcp.testing.mcp_servers import HttpServer
from odoo.addons.ai_mcp.testing.scripted_llm import ScriptedLLM

from .common import let_background_syncs_end

AI_USER_GROUPS = "base.group_user,ai_mcp.group_ai_user"


class ChatCase(HttpCase):
    """HttpCase: the routes run in the server's threads, on test cursors sharing this test's
    transaction, which is how `registry.cursor()` behaves for the chat runner too."""

    # extra options of the test MCP server (testing/mcp_servers.py)
    mcp_options = ()

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = cls.env(context=dict(cls.env.context, tracking_disable=True, mail_notrack=True))
        cls.llm = ScriptedLLM(api_key="sk-chat")
        cls.llm.start()
        cls.addClassCleanup(cls.llm.close)
        # the test server writes what its `slow` tool lived through (started, cancelled, finished) here
        cls.mcp_state = Path(tempfile.mkdtemp(prefix="ai_mcp_chat_mcp_"))
        cls.addClassCleanup(shutil.rmtree, cls.mcp_state, True)
        cls.mcp = HttpServer("streamable-http", "--state-dir", str(cls.mcp_state), *cls.mcp_options).start()
        cls.addClassCleanup(cls.mcp.stop)

        cls.user = new_test_user(cls.env, "chat_user", groups=AI_USER_GROUPS, name="Chat User")
        cls.other = new_test_user(cls.env, "chat_other", groups=AI_USER_GROUPS, name="Other User")
        cls.outsider = new_test_user(cls.env, "chat_outsider", groups="base.group_user", name="No AI")
        cls.provider = cls.env["ai.provider"].create(
            {"name": "Scripted", "base_url": cls.llm.base_url, "api_key": "sk-chat", "default_model": "scripted-model"}
        )
        cls.server = cls.env["mcp.server"].create({"name": "Test tools", "scope": "system", "url": cls.mcp.url})
        result = cls.server._sync_tools()
        assert not result.get("error"), result
        cls.addClassCleanup(cls._close_sessions)
        cls.tools = {tool.name: tool for tool in cls.server.tool_ids}
        cls.assistant = cls.env["ai.assistant"].create(
            {
                "name": "Helper",
                "provider_id": cls.provider.id,
                "mcp_server_ids": [(6, 0, cls.server.ids)],
                "system_prompt": "Be brief.",
            }
        )

    @classmethod
    def _other_users_service(cls):
        """A cloud service of `other` with a user server on the test MCP server (loopback allowed):
        (service, server)."""
        cls.env["ir.config_parameter"].sudo().set_param("ai_mcp.allowed_hosts", "127.0.0.1")
        service = cls.env["cloud.service"].create({"name": "Other's service", "owner_id": cls.other.id})
        server = cls.env["mcp.server"].create(
            {"name": "Service tools", "scope": "user", "cloud_service_id": service.id, "url": cls.mcp.url}
        )
        result = server._sync_tools()
        assert not result.get("error"), result
        return service, server

    # the servers a class makes beside `server`, whose pooled sessions are closed with its own
    servers_closed_at_end = ()

    @classmethod
    def _close_sessions(cls):
        hub = running_hub()
        if hub is not None:
            for server in (cls.server, *cls.servers_closed_at_end):
                hub.run(hub.aclose_server(server._server_key()))

    # whether this test lets every request open test cursors (Odoo 19; see setUp)
    _every_request_allowed = False

    def setUp(self):
        super().setUp()
        self.llm.reset()
        # these tests read a stream after its response came, and send from raw sockets, sessions
        # and threads of their own: every request may open test cursors for the whole test
        allowed = allow_every_request(self)
        if allowed is not None:
            allowed.__enter__()
            self._every_request_allowed = True
            self.addCleanup(allowed.__exit__, None, None, None)
            self.addCleanup(setattr, self, "_every_request_allowed", False)
        # what the class's servers announced while it was set up, and what they announce during the
        # test, is synced before the test (and its rollback) queries again
        let_background_syncs_end(self, test_lock_held=False)
        self.addCleanup(let_background_syncs_end, self, test_lock_held=False)

    @contextmanager
    def allow_requests(self, browser=None, all_requests=False):
        """Odoo 19's: within a test that allows every request already, a request allows nothing more."""
        if self._every_request_allowed:
            yield
            return
        with super().allow_requests(browser=browser, all_requests=all_requests):
            yield

    # -- HTTP ------------------------------------------------------------------------------------

    def login(self, user):
        self.session = self.authenticate(user.login, user.login)
        self.csrf = odoo.http.Request.csrf_token(types.SimpleNamespace(env=self.env, session=self.session))
        return self.session

    def post(self, path, body, csrf=True, stream=False, timeout=60):
        headers = {"Content-Type": "application/json"}
        if csrf:
            headers["X-CSRF-Token"] = self.csrf
        return self.opener.post(
            self.base_url() + path, data=json.dumps(body), headers=headers, stream=stream, timeout=timeout
        )

    def send(self, message, **body):
        """POST /ai_mcp/chat/stream; returns (response, [SseEvent])."""
        body = {"assistant_id": self.assistant.id, "message": message, **body}
        response = self.post("/ai_mcp/chat/stream", body)
        events = self.events_of(response)
        let_background_syncs_end(self, test_lock_held=False)
        return response, events

    def resume(self, conversation_id, **body):
        response = self.post("/ai_mcp/chat/resume", {"conversation_id": conversation_id, **body})
        events = self.events_of(response)
        let_background_syncs_end(self, test_lock_held=False)
        return response, events

    def replay(self, conversation_id, after=None, last_event_id=None):
        url = f"{self.base_url()}/ai_mcp/chat/{conversation_id}/events"
        if after is not None:
            url += f"?after={after}"
        headers = {"Last-Event-ID": str(last_event_id)} if last_event_id is not None else {}
        response = self.opener.get(url, headers=headers, timeout=30)
        return response, self.events_of(response)

    def jsonrpc(self, path, params=None):
        response = self.post(path, {"jsonrpc": "2.0", "method": "call", "params": params or {}}, csrf=False)
        self.assertEqual(response.status_code, 200, response.text)
        return response.json()

    @staticmethod
    def events_of(response):
        if not response.headers.get("Content-Type", "").startswith("text/event-stream"):
            return []
        decoder = SseDecoder()
        events = []
        for chunk in response.iter_content(chunk_size=None):
            events += decoder.feed(chunk)
        return events

    @staticmethod
    def events_of_bytes(data):
        return SseDecoder().feed(data)

    # -- the database, as the server threads left it -------------------------------------------

    def conversation(self, conversation_id):
        self.env.invalidate_all()
        return self.env["ai.conversation"].browse(conversation_id)

    def stored_events(self, conversation_id):
        self.env.invalidate_all()
        return self.env["ai.conversation.event"].search([("conversation_id", "=", conversation_id)], order="seq")

    def wait_for_state(self, conversation_id, state, timeout=20.0):
        """Polls on a test cursor (serialized with the server threads) until the conversation
        reaches `state`."""
        deadline = time.monotonic() + timeout
        current = None
        while time.monotonic() < deadline:
            with self.registry.cursor() as cr:
                cr.execute("SELECT state FROM ai_conversation WHERE id = %s", (conversation_id,))
                current = cr.fetchone()[0]
            if current == state:
                return
            time.sleep(0.1)
        self.fail(f"conversation {conversation_id} is {current!r}, not {state!r}, after {timeout} s")

    def raw_stream(self, body, read_until, path="/ai_mcp/chat/stream"):
        """POST the stream route (or `path`) over a plain socket, read until `read_until(events)` is
        true, and return (socket, events) without closing: the caller hangs up."""
        url = urlsplit(self.base_url())
        payload = json.dumps(body).encode()
        sock = socket.create_connection((url.hostname, url.port), timeout=30)
        request = (
            f"POST {path} HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\nX-CSRF-Token: {self.csrf}\r\nCookie: session_id={self.session.sid}\r\n"
            f"Accept: text/event-stream\r\n\r\n"
        ).encode() + payload
        self.env.flush_all()
        sock.sendall(request)
        buffer = b""
        while b"\r\n\r\n" not in buffer:
            buffer += sock.recv(65536)
        head, _, rest = buffer.partition(b"\r\n\r\n")
        self.assertIn(b" 200 ", head.split(b"\r\n")[0])
        decoder = _ChunkedSse()
        events = decoder.feed(rest)
        while not read_until(events):
            data = sock.recv(65536)
            if not data:
                break
            events += decoder.feed(data)
        return sock, events


class _ChunkedSse:
    """Decodes a chunked HTTP body into SSE events, incrementally."""

    def __init__(self):
        self.raw = b""
        self.sse = SseDecoder()

    def feed(self, data):
        self.raw += data
        events = []
        while True:
            size_end = self.raw.find(b"\r\n")
            if size_end < 0:
                return events
            size = int(self.raw[:size_end].split(b";")[0] or b"0", 16)
            if len(self.raw) < size_end + 2 + size + 2:
                return events
            chunk = self.raw[size_end + 2 : size_end + 2 + size]
            self.raw = self.raw[size_end + 2 + size + 2 :]
            events += self.sse.feed(chunk)
            if size == 0:
                return events


def types_of(events):
    """Event types with consecutive text deltas shown once: the model's chunking is not the point;
    without the `usage` following each model call, which test_usage.py asserts."""
    kinds = []
    for event in events:
        if (event.event == "text" and kinds and kinds[-1] == "text") or event.event == "usage":
            continue
        kinds.append(event.event)
    return kinds


def text_of(events):
    return "".join(event.data["delta"] for event in events if event.event == "text")
