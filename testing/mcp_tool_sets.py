"""The optional tool sets of the test MCP server (testing/mcp_servers.py): schema probes, prompts,
resources and the tools that talk while they run (progress, logs, questions, a changing tool list),
with the helpers they share to ask the user in either protocol era.
"""

import asyncio
import base64
import json
import os
import time
from pathlib import Path
from typing import Any

from mcp import types
from pydantic import BaseModel, Field, ValidationError

from .mcp_sdk import (
    MCP2,
    MODERN_PROTOCOL_VERSIONS,
    Asking,
    Context,
    MCPServer,
    prompt_base,
    render_elicitation_schema,
)

# A 1x1 red PNG, enough for a client to recognise an image part.
PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


class Preferences(BaseModel):
    name: str = Field(description="Your name")
    # an elicitation form takes only primitive fields: the choice is an enum in the schema
    color: str = Field("green", json_schema_extra={"enum": ["red", "green", "blue"]})
    newsletter: bool = False


# A question with a default of every kind the 2025-11-25 specification allows, one default the
# field refuses (never applied) and one field with none.
DEFAULTS_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "note": {"type": "string", "title": "Note", "default": "leave at the door"},
        "ratio": {"type": "number", "default": 3.14},
        "count": {"type": "integer", "minimum": 1, "default": 2},
        "gift": {"type": "boolean", "default": True},
        "color": {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            "default": "l",
        },
        "speed": {"type": "string", "enum": ["slow", "fast"], "enumNames": ["Slow", "Fast"], "default": "fast"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "default": ["a", "c"]},
        "badge": {"type": "integer", "default": "many"},
        "comment": {"type": "string"},
    },
    "required": ["count"],
}
# What a client that applies the defaults answers to DEFAULTS_FORM left untouched.
DEFAULTS_FORM_UNTOUCHED: dict[str, Any] = {
    "note": "leave at the door",
    "ratio": 3.14,
    "count": 2,
    "gift": True,
    "color": "green",
    "size": "l",
    "speed": "fast",
    "tags": ["a", "c"],
}


def add_schema_probes(mcp: MCPServer, ref_url: str) -> None:
    """Tools whose schemas probe how a client reads them: `ref_probe` (an argument whose schema is a
    `$ref` to `ref_url`: a client must not fetch it), `local_ref` (a `$ref` to the schema's own
    `$defs`, which resolves), `ask_ref` (a question whose field is a `$ref` to `ref_url`) and
    `optional_flags` (an optional boolean, which does not allow null, and an optional nullable text)."""

    @mcp.tool()
    def ref_probe(p: str) -> str:
        """Echo p; its listed schema refers elsewhere."""
        return f"ref_probe got {p}"

    @mcp.tool()
    def local_ref(color: str) -> str:
        """Paint in a colour of the schema's own definitions."""
        return f"painted {color}"

    @mcp.tool()
    def optional_flags(name: str, verbose: bool = False, note: str | None = None) -> str:
        """Say which arguments arrived."""
        return json.dumps({"name": name, "verbose": verbose, "note": note}, sort_keys=True)

    form = {"type": "object", "properties": {"code": {"$ref": ref_url}}, "required": ["code"]}

    @mcp.tool()
    async def ask_ref(ctx: Context) -> Asking:
        """Ask a form whose field refers elsewhere, then say what came back."""
        question = "Which code?"
        if _modern(ctx):
            answer = _answer(ctx, "code")
            if answer is None:
                return _ask("code", types.ElicitRequestFormParams(message=question, requested_schema=form))
        else:
            answer = await ctx.session.elicit_form(question, form, related_request_id=ctx.request_id)
        return json.dumps({"action": answer.action, "content": answer.content}, sort_keys=True)

    # the listed schemas, in place of the ones MCPServer derives from the signatures (it still
    # checks a call's arguments against the signature)
    listed = {
        "ref_probe": {"type": "object", "properties": {"p": {"$ref": ref_url}}, "required": ["p"]},
        "local_ref": {
            "type": "object",
            "$defs": {"Color": {"type": "string", "enum": ["red", "green"]}},
            "properties": {"color": {"$ref": "#/$defs/Color"}},
            "required": ["color"],
        },
    }
    for tool_name, schema in listed.items():
        mcp._tool_manager.get_tool(tool_name).parameters = schema


def add_prompts(mcp: MCPServer) -> None:
    """Prompts: one without arguments, one with a required and an optional one, one that answers
    with several messages, an assistant's among them, and an embedded resource."""

    @mcp.prompt(title="Daily summary")
    def daily_summary() -> str:
        """Summarise what happened today."""
        return "Summarise what happened today in three bullet points."

    @mcp.prompt(title="Write a greeting")
    def greeting(name: str, style: str = "warm") -> str:
        """A greeting for someone, in a style."""
        return f"Write a {style} greeting for {name}."

    @mcp.prompt(title="Review a file")
    def review(path: str) -> list[prompt_base.Message]:
        """Review a file, with its contents attached."""
        return [
            prompt_base.UserMessage(f"Please review {path}."),
            prompt_base.UserMessage(
                types.EmbeddedResource(
                    type="resource",
                    resource=types.TextResourceContents(
                        uri=f"file:///{path}", mimeType="text/plain", text="print('hello')"
                    ),
                )
            ),
            prompt_base.AssistantMessage("I will look for bugs first."),
        ]


def add_resources(mcp: MCPServer) -> None:
    """Resources: a text note, a PNG, a note per day (a template), a text too large to show whole;
    and tools that answer with a link to the note and with an embedded PNG."""

    @mcp.resource(
        "notes://today", name="today", title="Today's note", description="What to do today", mime_type="text/markdown"
    )
    def today() -> str:
        return "# Today\n- water the plants"

    @mcp.resource("images://dot.png", name="dot", title="A dot", mime_type="image/png")
    def dot() -> bytes:
        return PNG_1PX

    @mcp.resource("notes://day/{day}", name="day", title="A day's note", mime_type="text/markdown")
    def day(day: str) -> str:
        return f"# {day}\n- nothing planned"

    @mcp.resource("notes://big", name="big", title="A long log", mime_type="text/plain")
    def big() -> str:
        return "x" * 150_000

    @mcp.tool(annotations=types.ToolAnnotations(readOnlyHint=True), structured_output=False)
    def link_note() -> list[types.ContentBlock]:
        """Answer with a link to today's note."""
        return [types.ResourceLink(type="resource_link", uri="notes://today", name="today", mimeType="text/markdown")]

    @mcp.tool(annotations=types.ToolAnnotations(readOnlyHint=True), structured_output=False)
    def embed_dot() -> list[types.ContentBlock]:
        """Answer with an embedded PNG."""
        blob = base64.b64encode(PNG_1PX).decode()
        return [
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(uri="images://dot.png", mimeType="image/png", blob=blob),
            )
        ]


def add_notifying_tools(mcp: MCPServer, state_dir: Path | None) -> None:
    """Tools that talk while they run: progress, log messages, a tool list that changes."""
    _add_progress_tools(mcp, state_dir)
    _add_asking_tools(mcp)
    _add_structured_results(mcp)
    _add_growing_tool(mcp)


def _add_progress_tools(mcp: MCPServer, state_dir: Path | None) -> None:
    """Progress notifications, a call held until a test lets it go, log messages."""

    @mcp.tool()
    async def progress(steps: int, seconds: float, ctx: Context, quiet: bool = False, stamp: bool = False) -> str:
        """Report `steps` progress notifications spread over `seconds`, then answer. `quiet`: keep
        the same pace without sending them; `stamp`: each message says when it was sent (epoch s)."""
        started = time.monotonic()
        for i in range(1, steps + 1):
            if not quiet:
                sent = f" sent {time.time():.6f}" if stamp else ""
                await ctx.report_progress(i, steps, f"step {i} of {steps}{sent}")
            await asyncio.sleep(max(0.0, started + seconds * i / steps - time.monotonic()))
        mark_state(state_dir, "progress-finished", f"{steps}")
        return f"{steps} steps done"

    @mcp.tool()
    async def gate(ctx: Context, report: bool = False, limit: float = 60.0) -> str:
        """Send one progress notification when `report`, then wait until the file `gate-open`
        appears in the state folder (a test opens it once it has seen the call), at most `limit`
        seconds. The answer says which came first."""
        if report:
            await ctx.report_progress(0, 1, "waiting at the gate")
        deadline = time.monotonic() + limit
        while state_dir is not None and not (state_dir / "gate-open").exists():
            if time.monotonic() >= deadline:
                return "nobody opened the gate"
            await asyncio.sleep(0.05)
        return "the gate was opened"

    @mcp.tool()
    async def chatty(count: int, ctx: Context) -> str:
        """Send `count` log messages (info, then one warning) while running."""
        for i in range(count - 1):
            await ctx.info(f"working on item {i + 1}")
        await ctx.warning({"items": count, "note": "last one"})
        return f"logged {count}"


def _add_asking_tools(mcp: MCPServer) -> None:
    """Questions to the user (elicitation): a form, a form with defaults, a page to visit."""

    @mcp.tool(
        icons=[
            types.Icon(src="https://icons.example.com/wave.png", mimeType="image/png"),  # remote: never shown
            types.Icon(src=f"data:image/png;base64,{base64.b64encode(PNG_1PX).decode()}", mimeType="image/png"),
        ]
    )
    async def ask_preferences(ctx: Context) -> Asking:
        """Ask the user for a name and a colour (a form), then greet."""
        question = "Who are you, and which colour do you like?"
        if _modern(ctx):
            # 2026-07-28: no server requests; the question goes back in the result, the answer
            # comes with the client's retry of the same call
            answer = _answer(ctx, "preferences")
            if answer is None:
                return _ask(
                    "preferences",
                    types.ElicitRequestFormParams(message=question, requested_schema=_form_schema(Preferences)),
                )
            action, data = answer.action, _accepted(answer, Preferences)
        else:
            result = await ctx.elicit(question, Preferences)
            action, data = result.action, getattr(result, "data", None)
        if action == "accept":
            return f"hello {data.name}, {data.color}" + (" (subscribed)" if data.newsletter else "")
        return f"no answer: {action}"

    @mcp.tool()
    async def ask_defaults(ctx: Context) -> Asking:
        """Ask a form whose fields have defaults, then say exactly what came back: the raw answer,
        not a model that would fill in the defaults itself."""
        question = "Check the order options."
        if _modern(ctx):
            answer = _answer(ctx, "defaults")
            if answer is None:
                return _ask("defaults", types.ElicitRequestFormParams(message=question, requested_schema=DEFAULTS_FORM))
            result = answer
        else:
            result = await ctx.session.elicit_form(question, DEFAULTS_FORM, related_request_id=ctx.request_id)
        return json.dumps({"action": result.action, "content": result.content}, sort_keys=True)

    @mcp.tool()
    async def ask_visit(ctx: Context) -> Asking:
        """Send the user to a page (URL mode), then say what they answered."""
        question, url, elicitation_id = (
            "Confirm the payment on the provider's page.",
            "https://pay.example.com/confirm?id=42",
            "pay-42",
        )
        if _modern(ctx):
            answer = _answer(ctx, "visit")
            if answer is None:
                return _ask(
                    "visit", types.ElicitRequestURLParams(message=question, url=url, elicitation_id=elicitation_id)
                )
            return f"visit: {answer.action}"
        result = await ctx.elicit_url(question, url, elicitation_id)
        return f"visit: {result.action}"


def _add_structured_results(mcp: MCPServer) -> None:
    """Structured content the chat cannot show as a record or a table, and one that breaks its schema."""

    @mcp.tool(annotations=types.ToolAnnotations(readOnlyHint=True))
    def stock_report() -> dict[str, Any]:
        """Nested structured content: neither one record nor one table."""
        return {"warehouse": {"name": "North", "bins": [{"code": "A1", "items": 3}]}, "checked": True}

    @mcp.tool()
    def misreport(city: str) -> types.CallToolResult:
        """The weather, though its listed output schema says celsius is a string (see _list_tools)."""
        data = {"city": city, "celsius": 21.5}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(data))], structuredContent=data
        )


def _add_growing_tool(mcp: MCPServer) -> None:
    """A tool that adds a tool and says that the list changed."""

    @mcp.tool()
    async def grow(name: str, ctx: Context) -> str:
        """Add a tool called `name` and tell the client that the tool list changed."""

        def added() -> str:
            return f"{name} says hello"

        mcp.add_tool(added, name=name, description=f"Added at run time as {name}.")
        if MCP2:
            # 2026-07-28: to the clients listening (subscriptions/listen), whatever their connection
            await ctx.notify_tools_changed()
        if not _modern(ctx):
            # the handshake era: an unsolicited notification on this session
            await ctx.session.send_tool_list_changed()
        return f"added {name}"


# -- the two protocol eras -------------------------------------------------------------------


def _modern(ctx: Context) -> bool:
    """Whether the call came at 2026-07-28 (a per-request envelope, no session, no server requests)."""
    return MCP2 and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _ask(key: str, params: Any) -> Any:
    """The question of a 2026-07-28 call: the client asks the user and calls again with the answer
    under `key`, and with `key` as the request state it echoes."""
    return types.InputRequiredResult(input_requests={key: types.ElicitRequest(params=params)}, request_state=key)


def _answer(ctx: Context, key: str) -> Any:
    """On a retry of a 2026-07-28 call: the user's answer (an ElicitResult) to the question `key`
    asked on the round before; None on the first round."""
    answer = (ctx.input_responses or {}).get(key)
    if ctx.request_state != key or not isinstance(answer, types.ElicitResult):
        return None
    return answer


def _form_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The form a handshake-era `ctx.elicit(message, model)` asks."""
    return render_elicitation_schema(model)


def _accepted(answer: Any, model: type[BaseModel]) -> Any:
    """An accepted form's content as `model`, checked as `ctx.elicit` checks it; None otherwise."""
    if answer.action != "accept":
        return None
    if answer.content is None:
        raise ValueError("Received an accepted elicitation with no content")
    try:
        return model.model_validate(answer.content)
    except ValidationError as exc:
        raise ValueError("Received an accepted elicitation whose content does not match the requested schema") from exc


def call_session_id(ctx: Context) -> str:
    """What identifies the call's session: the session object on mcp 1.x; on 2.x, the HTTP session id
    (streamable HTTP's header, SSE's query), the process on stdio (one pipe, one session), and no
    session at all at 2026-07-28 or on a stateless HTTP server."""
    if not MCP2:
        return str(id(ctx.session))
    if _modern(ctx):
        return "none: MCP 2026-07-28 has no session"
    request = ctx.request_context.request
    if request is None:
        return f"stdio {os.getpid()}"
    return (
        request.headers.get("mcp-session-id")
        or request.query_params.get("session_id")
        or "none: a stateless HTTP server has no session"
    )


def mark_state(state_dir: Path | None, name: str, text: str) -> None:
    if state_dir is not None:
        with open(state_dir / name, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")


# what the test server completes, for the prompt `greeting` and the template `notes://day/{day}`
COMPLETION_NAMES = ("Ada", "Alan", "Alonzo", "Grace")
COMPLETION_DAYS = ("2026-01-01", "2026-01-02", "2026-02-01")


def add_completions(mcp: MCPServer) -> None:
    """completion/complete for the greeting's arguments and the day note's `day`: names and days
    that start with what is typed; the greeting's style depends on the name already filled in; a
    name starting with "many" answers the spec's most (100) and says there are more, "slow" answers late."""

    @mcp.completion()
    async def complete(
        ref: types.PromptReference | types.ResourceTemplateReference,
        argument: types.CompletionArgument,
        context: types.CompletionContext | None,
    ) -> types.Completion | None:
        typed = argument.value
        if isinstance(ref, types.ResourceTemplateReference):
            days = [d for d in COMPLETION_DAYS if d.startswith(typed)] if argument.name == "day" else []
            return types.Completion(values=days, total=len(days), hasMore=False)
        if ref.name != "greeting":
            return None
        if argument.name == "style":
            name = ((context.arguments if context else None) or {}).get("name")
            styles = ["formal", "friendly"] if name == "Ada" else ["warm", "witty"]
            return types.Completion(values=[s for s in styles if s.startswith(typed)])
        if typed.startswith("many"):
            return types.Completion(values=[f"many{i:03d}" for i in range(100)], total=150, hasMore=True)
        if typed.startswith("slow"):
            await asyncio.sleep(30)
        return types.Completion(values=[n for n in COMPLETION_NAMES if n.lower().startswith(typed.lower())])
