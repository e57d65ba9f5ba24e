import logging
import os
import socket
from urllib.parse import urlsplit

from odoo import api, models

_logger = logging.getLogger(__name__)

EXAMPLE_PORT = 8765
PROBE_SECONDS = 0.5


class AiDemo(models.AbstractModel):
    """Demo data that depends on the machine: called from data/ai_mcp_demo.xml at install and from
    data/ai_demo_environment.xml at each update, so that scripts/run gives a new user something to
    chat with, configured from the environment of its latest start."""

    _name = "ai.demo"
    _description = "AI demo setup"

    @api.model
    def _setup_from_environment(self):
        provider = self.env.ref("ai_mcp.demo_provider", raise_if_not_found=False)
        if provider:
            self._configure_provider(provider)
        server = self.env.ref("ai_mcp.demo_mcp_server", raise_if_not_found=False)
        if server:
            self._connect_example_server(server)

    @api.model
    def _configure_provider(self, provider):
        """OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL, when set, configure the demo provider;
        without them the chat tells the user where a provider is configured."""
        values = {}
        if os.environ.get("OPENAI_BASE_URL"):
            values["base_url"] = os.environ["OPENAI_BASE_URL"].strip()
        if os.environ.get("OPENAI_API_KEY"):
            values["api_key"] = os.environ["OPENAI_API_KEY"].strip()
        if os.environ.get("OPENAI_MODEL"):
            values["default_model"] = os.environ["OPENAI_MODEL"].strip()
        if values:
            provider.sudo().write(values)
            _logger.info("Demo provider configured from the environment: %s", ", ".join(sorted(values)))

    @api.model
    def _connect_example_server(self, server):
        """Points the demo server at the example MCP server (AI_MCP_EXAMPLE_PORT, default 8765) and
        syncs its tools when it is running."""
        server = server.sudo()
        port = int(os.environ.get("AI_MCP_EXAMPLE_PORT") or EXAMPLE_PORT)
        url = f"http://127.0.0.1:{port}/mcp"
        if server.url != url and urlsplit(server.url or "").hostname in (None, "127.0.0.1", "localhost"):
            server.url = url
        parts = urlsplit(server.url or "")
        if not _listening(parts.hostname, parts.port):
            _logger.info(
                "Example MCP server not running on %s: start it with scripts/run, then sync %s", server.url, server.name
            )
            return
        result = server._sync_tools()
        if result.get("error"):
            _logger.info("Example MCP server did not sync: %s", result["error"])
        else:
            _logger.info("Example MCP server synced: %s", result["summary"])


def _listening(host, port):
    if not host or not port:
        return False
    try:
        with socket.create_connection((host, port), timeout=PROBE_SECONDS):
            return True
    except OSError:
        return False
