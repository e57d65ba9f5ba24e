"""The AI Assistant client action in a real browser (static/tests/tours/ai_mcp_chat_tour.js),
streaming real turns: the agent loop runs against the scripted OpenAI-compatible LLM and a real
MCP server over streamable HTTP, through the chat controllers.

The scripted model adds 2 and 3, then (after the user says "go on" at the round limit of 2) echoes
a text with a tool that requires approval, then answers. The tour reloads the page and expects the
same blocks, rebuilt from the stored history.

Odoo skips browser tests silently when websocket-client or Chromium is missing, so the test fails
instead (set AI_MCP_BROWSER_OPTIONAL=1 to allow skipping)."""

import json
import shutil
import tempfile
import time
from pathlib import Path

from psycopg2.pool import PoolError

from odoo.tests import HttpCase, tagged

from odoo.addons.ai_mcp.controllers.chat import ChatController
from odoo.addons.ai_mcp.hub_process import running_hub
from odoo.addons.ai_mcp.testing.mcp_servers import DEFAULTS_FORM_UNTOUCHED, HttpServer
from odoo.addons.ai_mcp.testing.mcp_tasks_server import PROGRAM as TASKS_PROGRAM
from odoo.addons.ai_mcp.testing.scripted_llm import ScriptedLLM, ToolCall, Turn

from .browser import browser_prepared
from .common import let_background_syncs_end, require_browser

ECHO_TEXT = "hello from the tour"
ANSWER = "**2 + 3 = 5**, and the echo tool said *hello from the tour*."


def scripted_model(body):
    """Round 1: add; round 2 (after "go on"): echo; the last call, made without tools: the answer."""
    offered = {tool["function"]["name"] for tool in body.get("tools") or []}
    results = [message for message in body.get("messages", []) if message.get("role") == "tool"]
    if offered and not results:
        return Turn(tool_calls=(ToolCall("add", {"a": 2, "b": 3}),))
    if offered and len(results) == 1:
        return Turn(tool_calls=(ToolCall("echo", {"text": ECHO_TEXT}),))
    return Turn(text=ANSWER, chunks=6)


class _TourCase(HttpCase):
    """A scripted model (`responder`) and a real MCP server (started with `server_options`), and for
    each test an assistant using only the tools `approvals` names ({tool: requires approval})."""

    responder = None
    server_options = ()
    # the server's program (testing/mcp_launch.py's default: the catalogue of test tools)
    server_program = None
    approvals = {}
    assistant_values = {}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.llm = ScriptedLLM(responder=cls.responder)
        cls.llm.start()
        cls.addClassCleanup(cls.llm.close)
        program = {"program": cls.server_program} if cls.server_program else {}
        cls.mcp = HttpServer("streamable-http", *cls.server_options, **program).start()
        cls.addClassCleanup(cls.mcp.stop)

    def setUp(self):
        super().setUp()
        require_browser(self)
        self.addCleanup(let_background_syncs_end, self)
        env = self.env(context=dict(self.env.context, tracking_disable=True))
        provider = env["ai.provider"].create(
            {
                "name": "Scripted LLM",
                "base_url": self.llm.base_url,
                "api_key": "sk-tour",
                "default_model": "scripted-model",
            }
        )
        self.server = env["mcp.server"].create(
            {
                "name": "Tour server",
                "scope": "system",
                "url": self.mcp.url,
                "call_timeout": self.assistant_values.get("call_timeout", 30),
            }
        )
        sync = self.server.action_sync_tools()
        self.assertEqual(sync["params"]["type"], "success", sync["params"]["message"])
        tools = {tool.name: tool for tool in self.server.tool_ids}
        for name, approval in self.approvals.items():
            tools[name].requires_approval = approval
        self.assistant = env["ai.assistant"].create(
            {
                "provider_id": provider.id,
                "mcp_server_ids": [(6, 0, self.server.ids)],
                # only the tools the script uses: a short tool list keeps the requests small
                "mcp_tool_disabled_ids": [(6, 0, [t.id for name, t in tools.items() if name not in self.approvals])],
                **self.assistant_values,
            }
        )

    def tearDown(self):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(self.server._server_key()))
        super().tearDown()


@tagged("post_install", "-at_install")
class TestChatTour(_TourCase):
    responder = staticmethod(scripted_model)
    approvals = {"echo": True, "add": False}
    assistant_values = {"name": "Tour assistant", "max_rounds": 2}

    def test_chat_streams_tool_blocks_dialogs_and_history(self):
        self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_chat_tour", login="admin", timeout=180)

        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        self.assertEqual(len(conversation), 1)
        self.assertEqual(conversation.state, "idle")
        tool_messages = conversation.message_ids.filtered(lambda m: m.role == "tool").sorted("seq")
        self.assertEqual(tool_messages.mapped("tool_name"), ["add", "echo"])
        self.assertEqual(set(tool_messages.mapped("status")), {"done"})
        # the model was asked three times: add, echo (after "go on"), then the answer without tools
        self.assertEqual(len(self.llm.requests), 3)
        self.assertFalse(self.llm.requests[-1].get("tools"))


def progress_model(body):
    """ "Greet me": `ask_preferences`, then the greeting it returned; "Check my order": `ask_defaults`,
    then what it received. "Show the stock": `stock_report`. Anything else: `progress` and
    `slow` at once, then an answer that says what happened to each."""
    messages = body.get("messages", [])
    last_user = max(index for index, message in enumerate(messages) if message.get("role") == "user")
    asked = messages[last_user]["content"]
    results = [message["content"] for message in messages[last_user:] if message.get("role") == "tool"]
    if asked.startswith("Show the stock"):
        return Turn(text="Here is the stock report.") if results else Turn(tool_calls=(ToolCall("stock_report", {}),))
    if asked.startswith("Greet me"):
        return (
            Turn(text=f"The server says: {results[-1]}")
            if results
            else Turn(tool_calls=(ToolCall("ask_preferences", {}),))
        )
    if asked.startswith("Check my order"):
        check = ToolCall("ask_defaults", {})
        return Turn(text=f"The server got: {results[-1]}") if results else Turn(tool_calls=(check,))
    if not results:
        # A notification every 1.5 s: Odoo's tour engine only checks a step once the page has been
        # quiet for 500 ms, so a faster pace would starve it until the call ends.
        return Turn(tool_calls=(ToolCall("progress", {"steps": 6, "seconds": 9}), ToolCall("slow", {"seconds": 60})))
    return Turn(text="The long job is done, without the slow one.", chunks=3)


@tagged("post_install", "-at_install")
class TestCallProgressTour(_TourCase):
    responder = staticmethod(progress_model)
    server_options = ("--notifying",)
    approvals = {name: False for name in ("progress", "slow", "ask_preferences", "stock_report", "ask_defaults")}
    assistant_values = {"name": "Progress assistant", "call_timeout": 90}

    def test_progress_bar_and_stopping_one_call(self):
        self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_call_progress_tour", login="admin", timeout=120)
        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        slow = conversation.message_ids.filtered(lambda m: m.tool_name == "slow")
        self.assertEqual((slow.status, slow.error_code), ("cancelled", "CANCELLED"))
        progress = self.env["ai.conversation.event"].search(
            [("conversation_id", "=", conversation.id), ("type", "=", "tool_progress")]
        )
        self.assertEqual(len(progress), 6, "every notification 1.5 s apart is stored")

    def test_a_servers_question_is_answered_in_the_chat(self):
        with browser_prepared(self, axe=True):
            self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_question_tour", login="admin", timeout=120)
        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        asked = conversation.message_ids.filtered(lambda m: m.tool_name == "ask_preferences")
        self.assertEqual((asked.status, asked.content), ("done", "hello Ada, blue"))
        # the form of defaults was sent untouched: the server got each default the field accepts
        checked = conversation.message_ids.filtered(lambda m: m.tool_name == "ask_defaults")
        self.assertEqual(checked.status, "done")
        self.assertEqual(json.loads(checked.content), {"action": "accept", "content": DEFAULTS_FORM_UNTOUCHED})

    def test_in_odoos_dark_scheme_questions_and_calls_keep_their_contrast(self):
        with browser_prepared(self, axe=True):
            self.start_tour(
                "/odoo/action-ai_mcp.action_ai_chat",
                "ai_mcp_question_tour",
                login="admin",
                timeout=120,
                cookies={"color_scheme": "dark"},
            )


def task_model(body):
    """Calls the task tool `hold`, then answers without it once its call was stopped."""
    if any(m.get("role") == "tool" for m in body.get("messages", [])):
        return Turn(text="The report was stopped before it was ready.", chunks=2)
    return Turn(tool_calls=(ToolCall("hold", {"label": "report"}),))


class _TaskTourCase(_TourCase):
    """The tasks server (testing/mcp_tasks_server.py), its tasks' states written to `task_state`, and
    its `hold` task offered without approval."""

    server_program = TASKS_PROGRAM
    approvals = {"hold": False}

    @classmethod
    def setUpClass(cls):
        cls.task_state = Path(tempfile.mkdtemp(prefix="ai_mcp_task_tour_"))
        cls.addClassCleanup(shutil.rmtree, cls.task_state, True)
        cls.server_options = ("--state-dir", str(cls.task_state))
        super().setUpClass()


@tagged("post_install", "-at_install")
class TestTaskTour(_TaskTourCase):
    responder = staticmethod(task_model)
    assistant_values = {"name": "Task assistant", "call_timeout": 90}

    def test_a_tasks_state_shows_in_its_block_and_the_stop_button_cancels_it(self):
        self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_task_tour", login="admin", timeout=120)
        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        held = conversation.message_ids.filtered(lambda m: m.tool_name == "hold")
        self.assertEqual((held.status, held.error_code), ("cancelled", "CANCELLED"))
        # tasks/cancel reached the server: the task there is cancelled, not left running
        state = self.task_state / "task-report"
        for _ in range(200):
            if state.read_text() == "cancelled":
                break
            time.sleep(0.05)
        self.assertEqual(state.read_text(), "cancelled")
        self.assertFalse(self.env["ai.mcp.task"].search([("conversation_id", "=", conversation.id)]))


def left_task_model(body):
    """Calls the task tool `hold`, then answers that the task goes on once its call ended "still running"."""
    if any(m.get("role") == "tool" for m in body.get("messages", [])):
        return Turn(text="The export goes on on the server.", chunks=2)
    return Turn(tool_calls=(ToolCall("hold", {"label": "ledger"}),))


@tagged("post_install", "-at_install")
class TestLeftTaskTour(_TaskTourCase):
    responder = staticmethod(left_task_model)
    # the turn waits one second for the call: the task outlives it
    assistant_values = {"name": "Export assistant", "call_timeout": 1}

    def test_a_task_left_running_after_its_answer_is_stopped_from_its_block(self):
        self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_left_task_tour", login="admin", timeout=120)
        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        task = self.env["ai.mcp.task"].search([("conversation_id", "=", conversation.id)])
        self.assertEqual((task.status, task.delivered), ("cancelled", True))
        self.assertEqual((self.task_state / "task-ledger").read_text(), "cancelled", "tasks/cancel reached the server")


def prompt_model(body):
    """Answers what the prompt asked, to show it reached the model as the user's message."""
    asked = [m["content"] for m in body.get("messages", []) if m.get("role") == "user"][-1]
    return Turn(text=f"You asked: {asked}", chunks=2)


@tagged("post_install", "-at_install")
class TestPromptTour(_TourCase):
    responder = staticmethod(prompt_model)
    server_options = ("--prompts",)
    approvals = {"echo": False}
    assistant_values = {"name": "Prompt assistant"}

    def test_a_slash_prompt_with_an_argument_starts_the_turn(self):
        with browser_prepared(self, axe=True, pointer=True):
            self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_prompt_tour", login="admin", timeout=120)
        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        self.assertEqual(
            conversation.message_ids.filtered(lambda m: m.role == "user").content, "Write a warm greeting for Ada."
        )

    def test_in_odoos_dark_scheme_the_prompts_keep_their_contrast(self):
        with browser_prepared(self, axe=True, pointer=True):
            self.start_tour(
                "/odoo/action-ai_mcp.action_ai_chat",
                "ai_mcp_prompt_tour",
                login="admin",
                timeout=120,
                cookies={"color_scheme": "dark"},
            )


@tagged("post_install", "-at_install")
class TestCompletionTour(_TourCase):
    responder = staticmethod(prompt_model)
    server_options = ("--prompts", "--completions")
    approvals = {"echo": False}
    assistant_values = {"name": "Completing assistant"}

    def test_a_prompt_argument_is_picked_among_the_servers_suggestions(self):
        with browser_prepared(self, axe=True, pointer=True):
            self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_completion_tour", login="admin", timeout=120)
        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        self.assertEqual(
            conversation.message_ids.filtered(lambda m: m.role == "user").content, "Write a witty greeting for Alan."
        )


def resource_model(body):
    """ "Show me today's note": link_note, then an answer; anything else: says what was attached."""
    messages = body.get("messages", [])
    last_user = max(index for index, message in enumerate(messages) if message.get("role") == "user")
    asked = messages[last_user]["content"]
    results = [m for m in messages[last_user:] if m.get("role") == "tool"]
    if asked.startswith("Show me"):
        return Turn(text="There is your note.") if results else Turn(tool_calls=(ToolCall("link_note", {}),))
    attached = asked.count("[Attached resource ")
    return Turn(text=f"I read {attached} attached resource(s).")


@tagged("post_install", "-at_install")
class TestResourceTour(_TourCase):
    responder = staticmethod(resource_model)
    server_options = ("--resources",)
    approvals = {"link_note": False}
    assistant_values = {"name": "Resource assistant"}

    def test_a_link_is_opened_and_a_resource_attached(self):
        self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_resource_tour", login="admin", timeout=120)
        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        last = conversation.message_ids.filtered(lambda m: m.role == "user").sorted("seq")[-1]
        self.assertEqual(
            last.content,
            "Summarise it\n\n[Attached resource notes://day/Monday (text/markdown) from Tour server]\n# "
            "Monday\n- nothing planned",
        )


class _PoolFull:
    """The chat route's first `failures` calls fail as Odoo does with its database pool full (its
    500 page, the request's transaction rolled back); the next ones are served."""

    def __init__(self, failures):
        self.failures = failures
        self.calls = 0

    def __call__(self, original):
        def json_body(controller):
            self.calls += 1
            if self.calls <= self.failures:
                raise PoolError("The Connection Pool Is Full")
            return original(controller)

        return json_body


@tagged("post_install", "-at_install")
class TestBusyTour(_TourCase):
    responder = staticmethod(lambda body: Turn(text="Here I am.", chunks=2))
    approvals = {"echo": False}
    assistant_values = {"name": "Busy assistant"}

    def test_a_start_refused_by_a_full_pool_is_sent_again(self):
        pool_full = _PoolFull(failures=2)
        self.patch(ChatController, "_json_body", pool_full(ChatController._json_body))
        with self.assertLogs("odoo.http", "ERROR") as logged:
            self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_busy_tour", login="admin", timeout=120)
        self.assertEqual(sum("PoolError" in line for line in logged.output), 2, "Odoo answered 500 twice")
        self.assertEqual(pool_full.calls, 3, "two starts refused, the third served")
        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        self.assertEqual(len(conversation), 1)
        self.assertEqual(
            conversation.message_ids.filtered(lambda m: m.role == "user").mapped("content"), ["Are you there?"]
        )
        self.assertEqual(len(self.llm.requests), 1, "the model answered once")


def search_model(body):
    """Searches its tools, calls `echo` once it is offered, then answers."""
    offered = {tool["function"]["name"] for tool in body.get("tools") or []}
    results = [message for message in body.get("messages", []) if message.get("role") == "tool"]
    if "echo" in offered and len(results) == 1:
        return Turn(tool_calls=(ToolCall("echo", {"text": "hi"}),))
    if "search_tools" in offered and not results:
        return Turn(tool_calls=(ToolCall("search_tools", {"query": "echo text back"}),))
    return Turn(text="The echo said hi.", chunks=2)


@tagged("post_install", "-at_install")
class TestToolSearchTour(_TourCase):
    responder = staticmethod(search_model)
    approvals = {name: False for name in ("echo", "add", "weather", "pid", "image")}
    assistant_values = {"name": "Search assistant", "tool_search_threshold": 2}

    def test_a_search_of_the_models_shows_as_a_block_before_the_call_it_found(self):
        with browser_prepared(self, axe=True):
            self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_tool_search_tour", login="admin", timeout=120)
        conversation = self.env["ai.conversation"].search([("assistant_id", "=", self.assistant.id)])
        self.assertEqual(conversation.message_ids.filtered(lambda m: m.role == "tool").mapped("tool_name"), ["echo"])
        self.assertEqual(
            [tool["function"]["name"] for tool in self.llm.requests[0]["tools"]], ["search_tools"], "5 tools, past 2"
        )
