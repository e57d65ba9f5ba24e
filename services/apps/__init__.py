"""The MCP Apps wing: a tool's ui:// app, read, sandboxed and fed.

The app resource a tool names (its HTML, checked and given the Content Security Policy its sandbox
runs under), the context an open app hands the model for the next turn, and the tool results an app
receives. It knows the shared vocabulary only; the MCP wing reads the resources, Odoo's records
keep the apps of a conversation.
"""

from .context import AppContext, MAX_APPS, MAX_CONTEXT_CHARS, context_text, prompt_section
from .results import call_tool_result, resource_contents
from .sandbox import AppCache, AppResource, app_resource, log_dropped, sandbox_policy

__all__ = [
    "AppCache",
    "AppContext",
    "AppResource",
    "MAX_APPS",
    "MAX_CONTEXT_CHARS",
    "app_resource",
    "call_tool_result",
    "context_text",
    "log_dropped",
    "prompt_section",
    "resource_contents",
    "sandbox_policy",
]
