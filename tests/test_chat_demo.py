"""First run: the demo provider from the environment, the example MCP server shipped in examples/
synced as the demo's system server, and its tools."""

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path
from unittest.mock import patch

from odoo.tests import TransactionCase, tagged

from odoo.addons.ai_mcp.hub_process import process_hub, running_hub
from odoo.addons.ai_mcp.models.ai_demo import _listening
from odoo.addons.ai_mcp.testing.mcp_servers import free_port

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "example_mcp_server.py"


def example_module():
    spec = importlib.util.spec_from_file_location("ai_mcp_example_mcp_server", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@tagged("post_install", "-at_install")
class TestChatDemo(TransactionCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.provider = cls.env.ref("ai_mcp.demo_provider", raise_if_not_found=False)
        cls.server = cls.env.ref("ai_mcp.demo_mcp_server", raise_if_not_found=False)
        cls.assistant = cls.env.ref("ai_mcp.demo_assistant", raise_if_not_found=False)

    def setUp(self):
        super().setUp()
        if not self.provider:
            self.skipTest("the database has no demo data")

    def _close_sessions(self):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(self.server._server_key()))

    def test_provider_from_the_environment(self):
        environ = {
            "OPENAI_BASE_URL": "http://127.0.0.1:11434/v1",
            "OPENAI_API_KEY": "sk-from-env",
            "OPENAI_MODEL": "llama3",
        }
        with patch.dict(os.environ, environ):
            self.env["ai.demo"]._configure_provider(self.provider)
        self.assertEqual(self.provider.base_url, "http://127.0.0.1:11434/v1")
        self.assertEqual(self.provider.default_model, "llama3")
        self.assertTrue(self.provider.api_key_set)
        self.assertEqual(self.provider._llm_settings().api_key.get_secret_value(), "sk-from-env")

    def test_nothing_in_the_environment_changes_nothing(self):
        before = (self.provider.base_url, self.provider.default_model, self.provider.api_key_set)
        clean = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        with patch.dict(os.environ, clean, clear=True):
            self.env["ai.demo"]._configure_provider(self.provider)
        self.assertEqual((self.provider.base_url, self.provider.default_model, self.provider.api_key_set), before)

    def test_example_server_synced_for_the_demo_assistant(self):
        port = free_port()
        process = subprocess.Popen(
            [sys.executable, str(EXAMPLE), "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.addCleanup(process.wait, 10)
        self.addCleanup(process.terminate)
        deadline = time.monotonic() + 20
        while not _listening("127.0.0.1", port):
            self.assertLess(time.monotonic(), deadline, "the example server did not start")
            self.assertIsNone(process.poll(), "the example server exited")
            time.sleep(0.1)
        with patch.dict(os.environ, {"AI_MCP_EXAMPLE_PORT": str(port)}):
            self.env["ai.demo"]._connect_example_server(self.server)
        self.addCleanup(self._close_sessions)
        self.assertEqual(self.server.url, f"http://127.0.0.1:{port}/mcp")
        self.assertEqual(self.server.state, "connected", self.server.last_error)
        tools = {tool.name: tool for tool in self.server.tool_ids}
        self.assertEqual(set(tools), {"current_time", "calculate", "convert_units", "roll_dice"})
        self.assertTrue(tools["roll_dice"].requires_approval, "not marked read-only: the demo shows an approval")
        self.assertFalse(tools["calculate"].requires_approval)
        bound = {binding.tool.name for binding in self.assistant._tool_bindings()}
        self.assertEqual(bound, set(tools))
        hub = process_hub()
        result = hub.run(
            hub.acall_tool(
                self.server._server_spec(), "convert_units", {"value": 100, "from_unit": "c", "to_unit": "f"}
            )
        )
        self.assertEqual(result.text_for_model(), "100 c = 212 f")

    def test_example_server_not_running_is_left_for_later(self):
        port = free_port()
        with patch.dict(os.environ, {"AI_MCP_EXAMPLE_PORT": str(port)}):
            self.env["ai.demo"]._connect_example_server(self.server)
        self.assertEqual(self.server.url, f"http://127.0.0.1:{port}/mcp")
        self.assertNotEqual(self.server.state, "connected")

    def test_example_tools(self):
        example = example_module()
        self.assertEqual(example.evaluate("2 ** 10 + (3 * 4) / 5"), 1026.4)
        self.assertEqual(example.evaluate("-7 // 2"), -4)
        for bad in ("__import__('os')", "a + 1", "2 ** 100000", "1 / 0", "x" * 300, "[1, 2]", "True + 1"):
            with self.assertRaises(ValueError, msg=bad):
                example.evaluate(bad)
        self.assertAlmostEqual(example.convert(3, "mi", "km"), 4.828032)
        self.assertAlmostEqual(example.convert(100, "F", "celsius"), 37.7777777778)
        self.assertAlmostEqual(example.convert(1, "GiB", "MB"), 1073.741824)
        with self.assertRaises(ValueError):
            example.convert(1, "kg", "km")
        with self.assertRaises(ValueError):
            example.convert(1, "c", "kg")
        with self.assertRaises(ValueError):
            example.convert(1, "furlong", "m")
