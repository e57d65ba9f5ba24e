"""Each kind of provider runs a two-round tool turn (a tool call, its result, the answer) through
`run_turn` with a real MCP server, against a scripted server as strict as the provider documents
(testing/llm_providers.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from conftest import http_spec
from test_agent_loop import persisted, run, tools_of

from services.events import ModelRefusedParamEvent
from services.llm import (
    ApiStyle,
    LlmSettings,
    ModelCapabilities,
    ProviderKind,
    default_capabilities,
    prompt_cache_key,
)
from services.loop import AssistantSettings, HistoryMessage, Resume, TurnRequest, history_from_events
from services.loop.transcript import HistoryToolCall
from services.mcp import McpHub
from testing.llm_providers import (
    AzureClassic,
    AzureClassicResponses,
    DeepSeekReasoner,
    GeminiCompat,
    LiteLLMWithoutDropParams,
    OpenAIReasoning,
    RefusesUnknownFields,
    ResponsesApi,
    VllmWithoutAutoToolChoice,
)
from testing.mcp_servers import HttpServer
from testing.scripted_llm import Provider, ScriptedLLM, ToolCall, Turn, tool_then_answer


@pytest.fixture
def serve(scripted_llms: Callable[..., ScriptedLLM]) -> Callable[..., ScriptedLLM]:
    """A scripted LLM as strict as `provider`, calling the first tool offered then answering."""
    return lambda provider, **options: scripted_llms(responder=tool_then_answer, provider=provider, **options)


def assistant(llm: ScriptedLLM, prompted_tools: bool = False, **fields: Any) -> AssistantSettings:
    fields.setdefault("api_key", "k")
    fields.setdefault("model", "scripted-model")
    return AssistantSettings(
        name="Helper",
        llm=LlmSettings(base_url=fields.pop("base_url", llm.base_url), max_retries=0, timeout=10, **fields),
        prompted_tools=prompted_tools,
    )


def two_rounds(hub: McpHub, server: HttpServer, settings: AssistantSettings, **request: Any) -> list[Any]:
    """A turn whose model calls `echo`, reads its result and answers."""
    spec = http_spec(server)
    echo = [b for b in tools_of(hub, spec, **request.pop("tools", {})) if b.tool.name == "echo"]
    return run(hub, TurnRequest(assistant=settings, tools=echo, user_message="Echo x", **request))


def answered(events: list[Any]) -> str:
    """The final answer of a turn that ended well, with one tool call that ran."""
    assert events[-1].type == "done", events[-1]
    assert [e.ok for e in events if e.type == "tool_result"] == [True]
    return "".join(e.delta for e in events if e.type == "text")


def test_an_openai_reasoning_model_gets_no_temperature_from_its_family(
    hub: McpHub, serve: Any, tools_server: HttpServer
) -> None:
    llm = serve(OpenAIReasoning())
    capabilities = default_capabilities("o3", ProviderKind.OPENAI)
    settings = assistant(llm, model="o3", kind=ProviderKind.OPENAI, temperature=0.2, capabilities=capabilities)
    settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={"max_output_tokens": 500})})
    events = two_rounds(hub, tools_server, settings)
    assert answered(events).startswith("done: x")
    assert not [e for e in events if e.type == "model_refused_param"]
    assert all("temperature" not in r and r["max_completion_tokens"] == 500 for r in llm.requests)
    assert all(r["reasoning_effort"] == "medium" for r in llm.requests)


def test_a_refused_temperature_is_left_out_told_and_not_sent_again(
    hub: McpHub, serve: Any, tools_server: HttpServer
) -> None:
    # an Azure deployment's name hides the reasoning model behind it: only its refusal tells
    llm = serve(OpenAIReasoning())
    events = two_rounds(hub, tools_server, assistant(llm, model="prod-reasoner", temperature=0.2))
    answered(events)
    (refused,) = [e for e in events if isinstance(e, ModelRefusedParamEvent)]
    assert (refused.model, refused.param) == ("prod-reasoner", "temperature")
    assert "does not support 0.2" in refused.message
    assert [r.get("temperature") for r in llm.requests] == [0.2, None, None]


def test_azure_classic_deployment_url_version_and_key_header(hub: McpHub, serve: Any, tools_server: HttpServer) -> None:
    llm = serve(AzureClassic(deployment="prod-gpt4o", api_version="2024-10-21", key="azure-key"))
    settings = assistant(
        llm, kind=ProviderKind.AZURE, model="prod-gpt4o", api_version="2024-10-21", api_key="azure-key"
    )
    assert answered(two_rounds(hub, tools_server, settings)).startswith("done: x")
    # the same deployment without the version is what Azure answers "Resource not found"
    unversioned = settings.model_copy(update={"llm": settings.llm.model_copy(update={"api_version": ""})})
    failed = two_rounds(hub, tools_server, unversioned)
    assert failed[-1].type == "error" and "404" in failed[-1].message


def test_azure_classic_with_the_responses_api(hub: McpHub, serve: Any, tools_server: HttpServer) -> None:
    llm = serve(AzureClassicResponses(deployment="prod-gpt5", api_version="2025-04-01-preview", key="azure-key"))
    settings = assistant(
        llm,
        kind=ProviderKind.AZURE,
        api=ApiStyle.RESPONSES,
        model="prod-gpt5",
        api_version="2025-04-01-preview",
        api_key="azure-key",
    )
    assert answered(two_rounds(hub, tools_server, settings)).startswith("done: x")


def test_azure_classic_accepts_the_url_an_admin_pastes(hub: McpHub, serve: Any, tools_server: HttpServer) -> None:
    llm = serve(AzureClassic(deployment="d1", api_version="2025-01-01-preview", key="azure-key"))
    pasted = f"{llm.base_url}/openai/deployments/d1/"
    settings = assistant(
        llm, base_url=pasted, kind=ProviderKind.AZURE, model="d1", api_version="2025-01-01-preview", api_key="azure-key"
    )
    answered(two_rounds(hub, tools_server, settings))


def test_azure_v1_url_takes_the_key_as_a_bearer_token(hub: McpHub, serve: Any, tools_server: HttpServer) -> None:
    llm = serve(Provider(), api_key="azure-key")
    settings = assistant(llm, kind=ProviderKind.AZURE, model="prod-gpt4o", api_key="azure-key")
    answered(two_rounds(hub, tools_server, settings))


class _NeedsGatewayHeaderAndQuery(Provider):
    """A gateway in front of a model: every request must carry its header and query parameter."""

    def serves(self, path: str) -> bool:
        return path.split("?")[0].rstrip("/") == "/v1/chat/completions"

    def refusal(self, path: str, headers: Any, body: dict) -> tuple[int, Any] | None:
        if headers.get("X-Gateway-Team") != "sales" or "tenant=acme" not in path:
            return 403, {"error": {"message": "gateway: team header or tenant missing"}}
        return None


def test_extra_headers_and_query_reach_the_provider(hub: McpHub, serve: Any, tools_server: HttpServer) -> None:
    llm = serve(_NeedsGatewayHeaderAndQuery())
    settings = assistant(llm, extra_headers=(("X-Gateway-Team", "sales"),), extra_query=(("tenant", "acme"),))
    answered(two_rounds(hub, tools_server, settings))
    refused = two_rounds(hub, tools_server, assistant(llm))
    assert refused[-1].type == "error" and "gateway: team header or tenant missing" in refused[-1].message


def test_gemini_tool_calls_without_index_run_and_their_signatures_go_back(
    hub: McpHub, serve: Any, tools_server: HttpServer
) -> None:
    llm = serve(GeminiCompat())
    events = two_rounds(hub, tools_server, assistant(llm, model="gemini-3-pro-preview"))
    assert answered(events).startswith("done: x")
    (call,) = [e for e in events if e.type == "tool_call"]
    assert call.replay == {"extra_content": {"google": {"thought_signature": "sig-1"}}}
    (sent,) = [m for m in llm.requests[1]["messages"] if m.get("tool_calls")]
    assert sent["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "sig-1"}}


def test_gemini_several_calls_of_one_reply_each_run(hub: McpHub, serve: Any, tools_server: HttpServer) -> None:
    llm = serve(GeminiCompat())
    llm.queue(Turn(tool_calls=(ToolCall("echo", {"text": "a"}), ToolCall("echo", {"text": "b"}))))
    events = two_rounds(hub, tools_server, assistant(llm, model="gemini-3-pro-preview"))
    assert events[-1].type == "done"
    # the two calls run at once: their results stream in the order they finish
    results = [e for e in events if e.type == "tool_result"]
    assert sorted((r.ok, r.model_text) for r in results) == [(True, "a"), (True, "b")]
    # only the first call of the step was signed: it goes back signed, the other as it came
    assert [e.replay for e in events if e.type == "tool_call"] == [
        {"extra_content": {"google": {"thought_signature": "sig-1"}}},
        None,
    ]
    (sent,) = [m for m in llm.requests[1]["messages"] if m.get("tool_calls")]
    assert [call.get("extra_content") for call in sent["tool_calls"]] == [
        {"google": {"thought_signature": "sig-1"}},
        None,
    ]


class _OneIndexForAll(Provider):
    """A server numbering every tool call of a reply 0."""

    def stream(self, reply: Any, chunks: list[dict]) -> list[bytes]:
        for chunk in chunks:
            for choice in chunk.get("choices") or ():
                for call in (choice.get("delta") or {}).get("tool_calls") or ():
                    call["index"] = 0
        return super().stream(reply, chunks)


def test_calls_sent_under_one_index_are_told_apart_by_id(hub: McpHub, serve: Any, tools_server: HttpServer) -> None:
    llm = serve(_OneIndexForAll())
    llm.queue(Turn(tool_calls=(ToolCall("echo", {"text": "a"}), ToolCall("echo", {"text": "b"}))))
    events = two_rounds(hub, tools_server, assistant(llm))
    assert events[-1].type == "done"
    # each result answers its own call: the call that echoes "a" gets "a", whatever order they finished in
    asked = {e.id: e.arguments["text"] for e in events if e.type == "tool_call"}
    answered_with = {e.id: e.model_text for e in events if e.type == "tool_result"}
    assert sorted(asked.values()) == ["a", "b"] and len(asked) == 2
    assert answered_with == asked


def test_gemini_signatures_survive_a_pause_for_approval(hub: McpHub, serve: Any, tools_server: HttpServer) -> None:
    llm = serve(GeminiCompat())
    settings = assistant(llm, model="gemini-3-pro-preview")
    paused = two_rounds(hub, tools_server, settings, tools={"approval": frozenset({"echo"})})
    assert paused[-1].type == "approval_required"
    history = history_from_events(persisted(paused), user_message="Echo x")
    spec = http_spec(tools_server)
    echo = [b for b in tools_of(hub, spec, approval=frozenset({"echo"})) if b.tool.name == "echo"]
    call_id = paused[-1].calls[0].id
    resumed = run(
        hub, TurnRequest(assistant=settings, tools=echo, history=history, resume=Resume(approvals={call_id: True}))
    )
    assert answered(resumed).startswith("done: x")


def test_gemini_error_list_reaches_the_user(hub: McpHub, serve: Any, tools_server: HttpServer) -> None:
    llm = serve(GeminiCompat())
    # a conversation stored before signatures were kept: the call of this turn has none
    history = [
        HistoryMessage(role="user", content="Echo x"),
        HistoryMessage(role="assistant", tool_calls=(HistoryToolCall(id="old", name="echo", arguments={"text": "x"}),)),
        HistoryMessage(role="tool", content="x", tool_call_id="old"),
    ]
    settings = assistant(llm, model="gemini-3-pro-preview")
    events = run(hub, TurnRequest(assistant=settings, history=history, resume=Resume(go_on=True)))
    assert events[-1].type == "error"
    assert "HTTP 400" in events[-1].message and "Function call is missing a thought_signature" in events[-1].message


def test_deepseek_reasoner_thinking_is_shown_and_sent_back_with_its_tool_calls_in_later_questions(
    hub: McpHub, serve: Any, tools_server: HttpServer
) -> None:
    llm = serve(DeepSeekReasoner())
    settings = assistant(
        llm, model="deepseek-reasoner", capabilities=default_capabilities("deepseek-reasoner", ProviderKind.COMPATIBLE)
    )
    paused = two_rounds(hub, tools_server, settings, tools={"approval": frozenset({"echo"})})
    thinking = "".join(e.delta for e in paused if e.type == "thinking")
    assert thinking == DeepSeekReasoner.thought
    # resumed from what was stored, as another worker would after the approval
    history = history_from_events(persisted(paused), user_message="Echo x")
    spec = http_spec(tools_server)
    echo = [b for b in tools_of(hub, spec, approval=frozenset({"echo"})) if b.tool.name == "echo"]
    call_id = paused[-1].calls[0].id
    resumed = run(
        hub, TurnRequest(assistant=settings, tools=echo, history=history, resume=Resume(approvals={call_id: True}))
    )
    assert answered(resumed).startswith("done: x")
    (sent,) = [m for m in llm.requests[-1]["messages"] if m.get("tool_calls")]
    assert sent["reasoning_content"] == DeepSeekReasoner.thought
    # a later question of the conversation: the message that made tool calls keeps its reasoning
    later = history_from_events(persisted(resumed), user_message=None)
    asked = len(llm.requests)
    free = [b for b in tools_of(hub, spec) if b.tool.name == "echo"]
    again = run(hub, TurnRequest(assistant=settings, tools=free, history=history + later, user_message="Again"))
    assert again[-1].type == "done", again[-1]
    earlier = [m for m in llm.requests[asked]["messages"] if m["role"] == "assistant"]
    assert [m.get("reasoning_content") for m in earlier] == [DeepSeekReasoner.thought, None]


def test_vllm_without_auto_tool_choice_says_what_fixes_it(hub: McpHub, serve: Any, tools_server: HttpServer) -> None:
    llm = serve(VllmWithoutAutoToolChoice())
    events = two_rounds(hub, tools_server, assistant(llm))
    assert events[-1].type == "error"
    assert "--enable-auto-tool-choice" in events[-1].message and "Tools in the Prompt" in events[-1].message
    # the assistant switch it names works on the same server
    prompted = two_rounds(hub, tools_server, assistant(llm, prompted_tools=True))
    assert prompted[-1].type == "done"
    # and so does a model whose record says it takes no native tool calls
    no_native = assistant(llm, capabilities=ModelCapabilities(native_tools=False))
    assert two_rounds(hub, tools_server, no_native)[-1].type == "done"
    assert "tools" not in llm.requests[-1]


def test_litellm_without_drop_params_learns_to_leave_stream_options_out(
    hub: McpHub, serve: Any, tools_server: HttpServer
) -> None:
    llm = serve(LiteLLMWithoutDropParams())
    events = two_rounds(hub, tools_server, assistant(llm))
    answered(events)
    assert [e.param for e in events if e.type == "model_refused_param"] == ["stream_options"]
    assert ["stream_options" in r for r in llm.requests] == [True, False, False]


def test_the_responses_api_when_chosen_reads_text_calls_and_reasoning_summary(
    hub: McpHub, serve: Any, tools_server: HttpServer
) -> None:
    llm = serve(ResponsesApi())
    capabilities = default_capabilities("gpt-5", ProviderKind.OPENAI)
    settings = assistant(
        llm, model="gpt-5", kind=ProviderKind.OPENAI, api=ApiStyle.RESPONSES, capabilities=capabilities
    )
    events = two_rounds(hub, tools_server, settings)
    assert answered(events).startswith("done: x")
    assert llm.requests[0]["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert "".join(e.delta for e in events if e.type == "thinking") == ResponsesApi.summary * 2
    assert llm.requests[1]["input"][-1]["type"] == "function_call_output"


@pytest.mark.parametrize("model", ["gpt-5.1-codex", "o3-pro", "gpt-6"])
def test_a_models_name_never_switches_the_api(
    hub: McpHub, llm: ScriptedLLM, tools_server: HttpServer, model: str
) -> None:
    llm._responder = tool_then_answer  # noqa: SLF001 - the fixture's server, answering as the others do
    events = two_rounds(hub, tools_server, assistant(llm, model=model, kind=ProviderKind.OPENAI))
    assert answered(events).startswith("done: x")
    assert all("messages" in r for r in llm.requests)


class _NamelessCalls(Provider):
    """A server whose tool calls lose their names on the way."""

    def stream(self, reply: Any, chunks: list[dict]) -> list[bytes]:
        for chunk in chunks:
            for choice in chunk.get("choices") or ():
                for call in (choice.get("delta") or {}).get("tool_calls") or ():
                    call.get("function", {}).pop("name", None)
        return super().stream(reply, chunks)


def test_a_tool_call_the_turn_cannot_read_ends_it_saying_so(hub: McpHub, serve: Any, tools_server: HttpServer) -> None:
    llm = serve(_NamelessCalls())
    events = two_rounds(hub, tools_server, assistant(llm))
    assert events[-1].type == "error"
    assert "could not read" in events[-1].message and "no tool ran" in events[-1].message


# -- prompt_cache_key ------------------------------------------------------------------------------


@pytest.mark.parametrize("api", [ApiStyle.CHAT_COMPLETIONS, ApiStyle.RESPONSES])
def test_openai_requests_carry_the_turns_prompt_cache_key(
    hub: McpHub, serve: Any, tools_server: HttpServer, api: ApiStyle
) -> None:
    llm = serve(ResponsesApi() if api is ApiStyle.RESPONSES else Provider())
    capabilities = default_capabilities("gpt-4o", ProviderKind.OPENAI)
    assert capabilities.prompt_cache_key
    settings = assistant(llm, model="gpt-4o", kind=ProviderKind.OPENAI, api=api, capabilities=capabilities)
    answered(two_rounds(hub, tools_server, settings, prompt_cache_key="5f0c2a"))
    assert [r["prompt_cache_key"] for r in llm.requests] == ["5f0c2a", "5f0c2a"]


def test_a_server_refusing_unknown_fields_is_sent_no_prompt_cache_key(
    hub: McpHub, serve: Any, tools_server: HttpServer
) -> None:
    llm = serve(RefusesUnknownFields())
    capabilities = default_capabilities("llama-3.3-70b", ProviderKind.COMPATIBLE)
    settings = assistant(llm, model="llama-3.3-70b", capabilities=capabilities)
    events = two_rounds(hub, tools_server, settings, prompt_cache_key="5f0c2a")
    answered(events)
    assert not [e for e in events if e.type == "model_refused_param"]
    assert len(llm.requests) == 2 and all("prompt_cache_key" not in r for r in llm.requests)


def test_a_refused_prompt_cache_key_is_left_out_and_told_for_the_model_to_learn(
    hub: McpHub, serve: Any, tools_server: HttpServer
) -> None:
    # a Mistral model's name behind a strict proxy: its family takes the key, the proxy does not
    llm = serve(RefusesUnknownFields())
    capabilities = default_capabilities("mistral-large-latest", ProviderKind.COMPATIBLE)
    assert capabilities.prompt_cache_key
    settings = assistant(llm, model="mistral-large-latest", capabilities=capabilities)
    events = two_rounds(hub, tools_server, settings, prompt_cache_key="5f0c2a")
    answered(events)
    (refused,) = [e for e in events if isinstance(e, ModelRefusedParamEvent)]
    assert refused.param == "prompt_cache_key" and "Extra inputs are not permitted" in refused.message
    assert [r.get("prompt_cache_key") for r in llm.requests] == ["5f0c2a", None, None]


def test_the_prompt_cache_key_is_a_keyed_hash_of_assistant_and_user() -> None:
    key = prompt_cache_key("database secret", 3, 7)
    assert key == prompt_cache_key("database secret", 3, 7) and len(key) == 32
    assert key != prompt_cache_key("database secret", 3, 8) != prompt_cache_key("database secret", 4, 7)
    assert key != prompt_cache_key("another database", 3, 7)
