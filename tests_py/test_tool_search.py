"""Tool search: the ranking over real servers' tools, and turns of an assistant with many tools
through real MCP servers (testing/tool_catalogue.py) and the scripted LLM."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from test_agent_loop import kinds, persisted, run, settings

from services.errors import ErrorCode
from services.events import ToolKey, ToolSearchEvent
from services.loop import AssistantSettings, LoopLimits, Resume, ToolBinding, TurnRequest, history_from_events
from services.loop.tool_names import ToolNameMap, ToolRef
from services.loop.tool_search import MAX_RESULTS, SearchableTool, ToolIndex, tokens
from services.mcp import McpHub
from services.server_spec import ServerSpec, build_server_spec
from testing.mcp_servers import HttpServer, serve_http
from testing.scripted_llm import ScriptedLLM, ToolCall, Turn, _sample_arguments
from testing.tool_catalogue import CATALOGUES, catalogue_tools

# (query, the tool that must be in the top 3): written from the tools' own descriptions
RANKING = [
    ("apply a formula to a cell", "apply_formula"),
    ("read data from an excel worksheet", "read_data_from_excel"),
    ("write rows of data into a spreadsheet", "write_data_to_excel"),
    ("create a pivot table", "create_pivot_table"),
    ("merge a range of cells", "merge_cells"),
    ("make a bar chart from the sales range", "create_chart"),
    ("rename a worksheet", "rename_worksheet"),
    ("bold font and background colour for a range", "format_range"),
    ("list the contents of a directory", "list_directory"),
    ("move or rename a file", "move_file"),
    ("find files matching a glob pattern", "search_files"),
    ("read a text file", "read_text_file"),
    ("file size and modification time", "get_file_info"),
    ("show the working tree status", "git_status"),
    ("record changes to the repository", "git_commit"),
    ("create a new git branch", "git_create_branch"),
    ("show the commit log", "git_log"),
    ("staged changes diff", "git_diff_staged"),
    ("create a customer invoice", "create_invoice"),
    ("confirm a quotation", "confirm_sale_order"),
    ("register a payment on an invoice", "register_payment"),
    ("overdue invoices", "list_overdue_invoices"),
    ("stock on hand of a product", "check_product_availability"),
    ("approve time off", "approve_leave"),
    ("log hours on a task", "log_timesheet"),
    ("res.partner search domain", "search_read"),
    ("open a pull request", "create_pull_request"),
    ("run a read-only sql query", "query"),
    ("describe the columns of a table", "describe_table"),
    ("share a folder with someone", "share_folder"),
]


def _searchable(servers: tuple[str, ...] = CATALOGUES) -> list[SearchableTool]:
    """Every catalogue tool under the name the model would call it by (ToolNameMap)."""
    listed = {(name.capitalize(), tool.name): tool for name in servers for tool in catalogue_tools(name)}
    names = ToolNameMap.build([ToolRef(f"mcp.server/{server}", server, tool) for server, tool in listed])
    return [
        SearchableTool.of(
            model_name,
            listed[ref.server_name, ref.tool].title,
            listed[ref.server_name, ref.tool].description,
            ref.server_name,
            listed[ref.server_name, ref.tool].input_schema,
        )
        for model_name, ref in names.items()
    ]


@pytest.fixture(scope="module")
def index() -> ToolIndex:
    return ToolIndex(_searchable())


# queries as a model words them when it looks for a tool for the user's task: its own words, not the
# catalogue's ("undo" where the tool says "revert", "find" where it says "search")
MODEL_WORDED = [
    ("undo a commit", "git_revert"),
    ("git blame line author", "git_blame"),
    ("refund invoice credit note", "create_credit_note"),
    ("share drive folder with user", "share_folder"),
    ("fork repository", "fork_repository"),
    ("new excel workbook", "create_workbook"),
    ("post note on record chatter", "post_message"),
    ("unpaid customer invoices", "list_overdue_invoices"),
    ("delete git branch", "git_delete_branch"),
    ("find files by name", "search_files"),
    ("grep for text in files", "grep_files"),
    ("database table columns", "describe_table"),
    ("slow sql queries", "get_top_queries"),
    ("send invoice by email", "send_invoice_email"),
    ("schedule meeting", "create_calendar_event"),
    ("create jira issue", "create_ticket"),
    ("pull request review", "create_pull_request_review"),
    ("stock quantity product", "check_product_availability"),
    ("employee vacation", "create_leave_request"),
    ("merge branch", "git_merge"),
    ("profit and loss report", "get_profit_and_loss"),
    ("contact lookup by email", "find_partner"),
    ("rename file", "move_file"),
    ("download document from drive", "download_document"),
]


def found_in(index: ToolIndex, query: str, wanted: str, limit: int) -> list[str]:
    found = [tool.name for tool in index.search(query, limit)]
    assert any(name == wanted or name.endswith(f"__{wanted}") for name in found), found
    return found


@pytest.mark.parametrize(("query", "wanted"), RANKING)
def test_the_right_tool_is_in_the_top_three(index: ToolIndex, query: str, wanted: str) -> None:
    assert len(index.tools) == 320
    found_in(index, query, wanted, 3)


@pytest.mark.parametrize(("query", "wanted"), MODEL_WORDED)
def test_a_models_own_wording_finds_the_tool_among_the_results_it_is_shown(
    index: ToolIndex, query: str, wanted: str
) -> None:
    found_in(index, query, wanted, MAX_RESULTS)


def test_a_word_finds_the_tools_that_say_it_otherwise_but_counts_less_than_the_word_itself() -> None:
    revert = SearchableTool("git_revert", "", "Revert some existing commits.", "Git")
    undo = SearchableTool("undo_edit", "", "Undo the last edit of a file.", "Files")
    assert [t.name for t in ToolIndex([revert]).search("undo commit")] == ["git_revert"]
    assert [t.name for t in ToolIndex([revert, undo]).search("undo")] == ["undo_edit", "git_revert"]


def test_a_tools_exact_name_comes_first_and_nothing_matches_nothing(index: ToolIndex) -> None:
    assert index.search("git_stash_pop", 5)[0].name == "git_stash_pop"
    assert index.search("zzzz qqqq", 5) == []


def test_words_meet_across_forms_cases_and_languages() -> None:
    assert tokens("createInvoice") == tokens("create_invoices") == tokens("Created invoice")
    chinese = SearchableTool("kaipiao", "", "为客户创建发票", "ERP")
    other = SearchableTool("kucun", "", "查询产品库存", "ERP")
    assert [t.name for t in ToolIndex([other, chinese]).search("创建发票")] == ["kaipiao"]


def test_the_index_follows_the_tools_it_is_built_from() -> None:
    before = [SearchableTool("sync_orders", "", "Sync the shop's orders.", "Shop")]
    after = [*before, SearchableTool("refund_order", "", "Refund a paid order to the customer.", "Shop")]
    assert ToolIndex(before).search("refund a customer") == []
    assert [t.name for t in ToolIndex(after).search("refund a customer")] == ["refund_order"]


# -- turns through real MCP servers ------------------------------------------------------------


@pytest.fixture(scope="module")
def catalogue_servers() -> Iterator[dict[str, HttpServer]]:
    """excel, filesystem, git and odoo: 160 tools on four real MCP servers."""
    with ExitStack() as stack:
        yield {
            name: stack.enter_context(serve_http("streamable-http", "--catalogue", name))
            for name in ("excel", "filesystem", "git", "odoo")
        }


def _bindings(
    hub: McpHub,
    servers: dict[str, HttpServer],
    approval: frozenset[str] = frozenset(),
    always: frozenset[str] = frozenset(),
    left_out: frozenset[str] = frozenset(),
) -> list[ToolBinding]:
    bindings = []
    for name, server in servers.items():
        spec = _spec(name, server)
        for tool in hub.run(hub.alist_tools(spec)).tools:
            if tool.name not in left_out:
                bindings.append(
                    ToolBinding(
                        server=spec,
                        tool=tool,
                        requires_approval=tool.name in approval,
                        always_offered=tool.name in always,
                    )
                )
    return bindings


def _spec(name: str, server: HttpServer) -> ServerSpec:
    return build_server_spec(
        key=f"mcp.server/{name}", name=name.capitalize(), transport="streamable_http", url=server.url
    )


def _offered(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools") or []]


def _searching(llm: ScriptedLLM, threshold: int = 30) -> AssistantSettings:
    return settings(llm).model_copy(update={"limits": LoopLimits(tool_search_threshold=threshold)})


def test_a_turn_finds_its_tools_then_calls_them_with_approval(
    hub: McpHub, llm: ScriptedLLM, catalogue_servers: dict[str, HttpServer]
) -> None:
    tools = _bindings(hub, catalogue_servers, approval=frozenset({"create_invoice"}), always=frozenset({"git_status"}))
    llm.queue(
        Turn(tool_calls=(ToolCall("search_tools", {"query": "create a customer invoice"}),)),
        Turn(tool_calls=(ToolCall("create_invoice", {"partner_id": 7, "lines": ["2 x chair"]}),)),
    )
    request = TurnRequest(assistant=_searching(llm), tools=tools, user_message="Invoice 2 chairs to Azure.")
    events = run(hub, request)
    assert kinds(events) == ["start", "round", "tool_search", "round", "tool_call", "approval_required"]
    search = next(e for e in events if e.type == "tool_search")
    assert search.query == "create a customer invoice" and search.found[0].tool == "create_invoice"
    assert search.found[0].server == "Odoo" and search.found[0].summary.startswith("Create a draft customer invoice")
    assert "create_invoice (Odoo): Create a draft customer invoice" in search.model_text
    first, second = llm.requests
    # 160 tools: the first call is offered the search and the tool always offered, with a word on the rest
    assert _offered(first) == ["search_tools", "git_status"]
    system = first["messages"][0]["content"]
    assert "You have 160 tools on these servers: Excel (40), Filesystem (40), Git (40), Odoo (40)." in system
    # the tools found come with their full schema from the next round on
    assert _offered(second)[:2] == ["search_tools", "git_status"]
    assert "create_invoice" in _offered(second) and len(_offered(second)) == 2 + len(search.found)
    schema = next(t for t in second["tools"] if t["function"]["name"] == "create_invoice")["function"]["parameters"]
    assert schema["required"] == ["partner_id", "lines"]
    # the approval is asked as for any tool; the resumed turn (another process) calls it on its server
    stored = persisted(events)
    llm.queue(Turn(text="Invoice created."))
    resumed = run(
        hub,
        TurnRequest(
            assistant=_searching(llm),
            tools=tools,
            history=history_from_events(stored[1:], "Invoice 2 chairs to Azure."),
            resume=Resume(approvals={next(e for e in events if e.type == "tool_call").id: True}),
            found_tools=tuple(search.kept),
        ),
    )
    assert kinds(resumed)[:3] == ["start", "tool_result", "round"] and kinds(resumed)[-1] == "done"
    assert resumed[1].ok and resumed[1].model_text.startswith("create_invoice done with")
    assert "create_invoice" in _offered(llm.requests[-1])


def test_a_tool_not_found_yet_is_not_run_and_the_model_is_told_how_to_find_it(
    hub: McpHub, llm: ScriptedLLM, catalogue_servers: dict[str, HttpServer]
) -> None:
    tools = _bindings(hub, catalogue_servers)
    llm.queue(
        Turn(tool_calls=(ToolCall("write_file", {"path": "/tmp/x", "content": "hi"}),)),
        Turn(text="I will search first."),
    )
    events = run(hub, TurnRequest(assistant=_searching(llm), tools=tools, user_message="Write x."))
    result = next(e for e in events if e.type == "tool_result")
    assert result.error_code == ErrorCode.MCP_TOOL_NOT_FOUND.value
    assert "find it with search_tools first" in result.model_text
    assert result.duration_ms == 0


def test_tools_found_stay_offered_in_the_next_turns_least_recently_used_going_first(
    hub: McpHub, llm: ScriptedLLM, catalogue_servers: dict[str, HttpServer]
) -> None:
    tools = _bindings(hub, catalogue_servers)
    assistant = _searching(llm, threshold=6)  # room for 6 tools found
    llm.queue(
        Turn(tool_calls=(ToolCall("search_tools", {"query": "git_commit"}),)),
        Turn(text="ok"),
    )
    first = run(hub, TurnRequest(assistant=assistant, tools=tools, user_message="commit"))
    kept = next(e for e in first if e.type == "tool_search").kept
    assert ToolKey(server="mcp.server/git", tool="git_commit") in kept and len(kept) == 5
    llm.queue(
        Turn(tool_calls=(ToolCall("git_commit", {"repo_path": "/r", "message": "m"}),)),
        Turn(tool_calls=(ToolCall("search_tools", {"query": "pivot table chart"}),)),
        Turn(text="done"),
    )
    history = history_from_events(persisted(first)[1:], "commit")
    second = run(
        hub,
        TurnRequest(assistant=assistant, tools=tools, history=history, user_message="again", found_tools=tuple(kept)),
    )
    assert next(e for e in second if e.type == "tool_result").ok
    # the next turn was offered the tools found before, from its first call
    assert "git_commit" in _offered(llm.requests[2])
    search = next(e for e in second if isinstance(e, ToolSearchEvent))
    # six kept: the tools just found (the best last), git_commit (called since), then the others found
    # first, the least recently found of which went
    commit = ToolKey(server="mcp.server/git", tool="git_commit")
    found = [ToolKey(server=f"mcp.server/{f.server.lower()}", tool=f.tool) for f in reversed(search.found)]
    assert len(search.kept) == 6 and search.kept[-len(found) :] == found and search.kept[-len(found) - 1] == commit
    dropped = [key for key in kept if key not in search.kept]
    assert len(dropped) == 5 + len(found) - 6 and dropped == [key for key in kept if key != commit][: len(dropped)]
    assert "create_pivot_table" in _offered(llm.requests[-1]) and "git_commit" in _offered(llm.requests[-1])


def test_calling_a_tool_found_keeps_the_tools_offered_and_the_prompt_byte_for_byte(
    hub: McpHub, catalogue_servers: dict[str, HttpServer]
) -> None:
    """The start of each request (system prompt, tools) stays what the provider's prompt cache
    holds: calling a tool found, the least recently found first, does not move it in the offer."""

    def search_then_call_the_first_found(body: dict[str, Any]) -> Turn:
        results = sum(1 for m in body["messages"] if m["role"] == "tool")
        if results == 0:
            return Turn(tool_calls=(ToolCall("search_tools", {"query": "git"}),))
        if results < 3:
            first_found = body["tools"][1]["function"]
            return Turn(tool_calls=(ToolCall(first_found["name"], _sample_arguments(first_found["parameters"])),))
        return Turn(text="Clean.")

    with ScriptedLLM(responder=search_then_call_the_first_found) as llm:
        request = TurnRequest(assistant=_searching(llm), tools=_bindings(hub, catalogue_servers), user_message="Git?")
        events = run(hub, request)
    assert events[-1].type == "done"
    search = next(e for e in events if isinstance(e, ToolSearchEvent))
    called = [e.name for e in events if e.type == "tool_call"]
    assert len(search.found) > 2 and called[0] == called[1] != search.found[0].name  # the best found is offered last
    rounds = llm.requests
    assert len(rounds) == 4 and _offered(rounds[1])[1] == called[0]
    assert [json.dumps(body["tools"]) for body in rounds[1:]] == [json.dumps(rounds[1]["tools"])] * 3
    assert [json.dumps(body["messages"][0]) for body in rounds] == [json.dumps(rounds[0]["messages"][0])] * 4


def test_few_tools_are_offered_as_they_are(
    hub: McpHub, llm: ScriptedLLM, catalogue_servers: dict[str, HttpServer]
) -> None:
    tools = _bindings(hub, {"git": catalogue_servers["git"]})
    llm.queue(Turn(text="hello"))
    run(hub, TurnRequest(assistant=_searching(llm, threshold=40), tools=tools, user_message="hi"))
    assert len(_offered(llm.requests[0])) == 40 and "search_tools" not in _offered(llm.requests[0])
    assert "tools on these servers" not in llm.requests[0]["messages"][0]["content"]


def test_a_search_finds_only_the_tools_the_turn_may_use(
    hub: McpHub, llm: ScriptedLLM, catalogue_servers: dict[str, HttpServer]
) -> None:
    tools = _bindings(hub, catalogue_servers, left_out=frozenset({"unlink_records", "git_clean"}))
    llm.queue(Turn(tool_calls=(ToolCall("search_tools", {"query": "delete records unlink_records"}),)), Turn(text="no"))
    events = run(hub, TurnRequest(assistant=_searching(llm), tools=tools, user_message="delete"))
    search = next(e for e in events if isinstance(e, ToolSearchEvent))
    assert search.found and all(f.tool not in {"unlink_records", "git_clean"} for f in search.found)
    assert not any("unlink_records" in _offered(body) for body in llm.requests)


def test_a_provider_refusing_more_than_128_tools_is_served_by_searching(
    hub: McpHub, catalogue_servers: dict[str, HttpServer]
) -> None:
    with ScriptedLLM(max_tools=128) as strict:
        tools = _bindings(hub, catalogue_servers)
        limits = LoopLimits(tool_search_threshold=500, tool_search_bytes=10**9)
        everything = settings(strict).model_copy(update={"limits": limits})
        events = run(hub, TurnRequest(assistant=everything, tools=tools, user_message="Read A1 of book.xlsx"))
        assert kinds(events)[-1] == "error"
        assert "array too long" in events[-1].message
        strict.queue(
            Turn(tool_calls=(ToolCall("search_tools", {"query": "read data from excel"}),)),
            Turn(tool_calls=(ToolCall("read_data_from_excel", {"filepath": "book.xlsx", "sheet_name": "S"}),)),
            Turn(text="A1 holds 42."),
        )
        events = run(hub, TurnRequest(assistant=_searching(strict), tools=tools, user_message="Read A1 of book.xlsx"))
        assert kinds(events)[-1] == "done" and next(e for e in events if e.type == "tool_result").ok


def test_a_search_is_rebuilt_from_its_event_as_a_call_and_its_answer() -> None:
    search = ToolSearchEvent(id="s1", name="search_tools", query="invoice", round=1, model_text="1 tools found")
    history = history_from_events(persisted([search]), "hi")
    assert [(m.role, m.tool_call_id) for m in history] == [("user", None), ("assistant", None), ("tool", "s1")]
    assert history[1].tool_calls[0].arguments == {"query": "invoice"} and history[2].content == "1 tools found"


def test_the_search_follows_a_servers_changed_tool_list(
    hub: McpHub, llm: ScriptedLLM, notifying_http: HttpServer
) -> None:
    spec = build_server_spec(key="mcp.server/growing", name="Shop", transport="streamable_http", url=notifying_http.url)
    assistant = _searching(llm, threshold=1)

    def search_for_refunds() -> ToolSearchEvent:
        tools = [ToolBinding(server=spec, tool=tool) for tool in hub.run(hub.alist_tools(spec)).tools]
        llm.queue(Turn(tool_calls=(ToolCall("search_tools", {"query": "refund an order"}),)), Turn(text="ok"))
        events = run(hub, TurnRequest(assistant=assistant, tools=tools, user_message="Refund order 7."))
        return next(e for e in events if isinstance(e, ToolSearchEvent))

    assert "refund_order" not in [f.tool for f in search_for_refunds().found]
    # the server adds a tool and says its list changed: the pooled session's list follows, and the search
    assert hub.run(hub.acall_tool(spec, "grow", {"name": "refund_order"})).text_for_model() == "added refund_order"
    assert search_for_refunds().found[0].tool == "refund_order"


def test_a_model_without_native_tools_searches_them_in_its_text(
    hub: McpHub, llm: ScriptedLLM, catalogue_servers: dict[str, HttpServer]
) -> None:
    tools = _bindings(hub, {"git": catalogue_servers["git"]})
    assistant = _searching(llm, threshold=10).model_copy(update={"prompted_tools": True})
    llm.queue(
        Turn(text='```json\n{"tool_calls": [{"name": "search_tools", "arguments": {"query": "git_status"}}]}\n```'),
        Turn(text='```json\n{"tool_calls": [{"name": "git_status", "arguments": {"repo_path": "/srv/repo"}}]}\n```'),
        Turn(text="Clean."),
    )
    events = run(hub, TurnRequest(assistant=assistant, tools=tools, user_message="Status?"))
    assert kinds(events).index("tool_search") < kinds(events).index("tool_call") and events[-1].type == "done"
    assert next(e for e in events if e.type == "tool_result").model_text.startswith("git_status done")
    first, second = (body["messages"][0]["content"] for body in llm.requests[:2])
    # described in the prompt: the search alone, then with the tools it found
    assert "### search_tools" in first and "### git_status" not in first
    assert "### search_tools" in second and "### git_status" in second
