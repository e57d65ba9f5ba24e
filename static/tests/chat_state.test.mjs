/** The chat state of a streamed turn: its events, approvals, failures, replay and tool blocks. */

import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {
    eventFromSse,
    fromHistory,
    reduce,
    stopped,
    toggleTool,
    userMessage,
} from "../src/chat/logic/chat_state.js";
import {SseParser} from "../src/chat/logic/sse_parser.js";
import {
    deepFreeze,
    sequence,
    play,
    statuses,
    lastAnswer,
    tools,
    asked,
} from "./chat_state_events.mjs";

describe("a streamed turn", () => {
    test("two rounds with concurrent tool calls give ordered blocks with statuses and durations", () => {
        const e = sequence();
        const events = [
            e.start(),
            e.round(1),
            e.text("Let me "),
            e.text("look."),
            e.call("call_a", "find_leads"),
            e.call("call_b", "weather", {approval: "conversation"}), // allowed for the conversation earlier
            e.result("call_b", {ms: 120}), // the second call finishes first
            e.result("call_a", {ok: false, code: "MCP_TIMEOUT", ms: 30000}),
            e.round(2),
            e.text("Three leads;"),
            e.text(" no forecast."),
            e.done(2),
        ];
        assert.deepEqual(statuses(asked("Leads?"), events), [
            "thinking",
            "thinking",
            "thinking",
            "thinking",
            "running_tools",
            "running_tools",
            "running_tools", // call_a still runs
            "thinking", // all results in: the model is called again
            "thinking",
            "thinking",
            "thinking",
            "idle",
        ]);
        const state = play(asked("Leads?"), events);
        assert.equal(state.conversationId, 7);
        assert.equal(state.assistant, "Helpdesk");
        assert.deepEqual([state.round, state.maxRounds], [2, 5]);
        assert.deepEqual(state.usage, {input_tokens: 100, output_tokens: 20});
        assert.equal(state.lastEventId, 12);
        assert.deepEqual(state.messages, [
            {role: "user", text: "Leads?"},
            {
                role: "assistant",
                parts: [
                    {kind: "text", text: "Let me look."},
                    {
                        kind: "tool",
                        key: "1:call_a",
                        id: "call_a",
                        name: "crm__find_leads",
                        tool: "find_leads",
                        title: "find leads",
                        server: "CRM",
                        arguments: {query: "call_a"},
                        round: 1,
                        icon: null,
                        app: null,
                        approval: null,
                        status: "error",
                        durationMs: 30000,
                        result: {
                            ok: false,
                            content: [],
                            errorCode: "MCP_TIMEOUT",
                            errorMessage: "MCP_TIMEOUT happened",
                        },
                        expanded: false,
                        progress: null,
                        logs: [],
                        cancelling: false,
                        question: null,
                        note: null,
                    },
                    {
                        kind: "tool",
                        key: "1:call_b",
                        id: "call_b",
                        name: "crm__weather",
                        tool: "weather",
                        title: "weather",
                        server: "CRM",
                        arguments: {query: "call_b"},
                        round: 1,
                        icon: null,
                        app: null,
                        approval: "conversation",
                        status: "done",
                        durationMs: 120,
                        result: {
                            ok: true,
                            content: [{type: "text", text: "call_b ok"}],
                            errorCode: null,
                            errorMessage: null,
                        },
                        expanded: false,
                        progress: null,
                        logs: [],
                        cancelling: false,
                        question: null,
                        note: null,
                    },
                    {kind: "text", text: "Three leads; no forecast."},
                ],
            },
        ]);
    });

    test("typed result parts are kept as sent", () => {
        const e = sequence();
        const content = [
            {type: "image", mime_type: "image/png", data: "iVBORw0KGgo="},
            {
                type: "resource_link",
                uri: "file:///a.txt",
                name: "a.txt",
                description: null,
                mime_type: "text/plain",
            },
            {type: "structured", data: {total: 3}},
        ];
        const state = play(asked("?"), [
            e.start(),
            e.round(1),
            e.call("c1", "chart"),
            e.result("c1", {content}),
        ]);
        assert.deepEqual(tools(state)[0].result.content, content);
    });

    test("consecutive text deltas merge into one part, and an empty delta changes nothing", () => {
        const e = sequence();
        const before = play(asked("Hi"), [
            e.start(),
            e.round(1),
            e.text("Hel"),
            e.text("lo"),
            e.text(", "),
        ]);
        const after = play(before, [e.text(""), e.text("world")]);
        assert.deepEqual(lastAnswer(after), [{kind: "text", text: "Hello, world"}]);
        assert.equal(after.messages.length, 2);
    });

    test("sending a message starts a new turn: thinking, with the last turn's banners gone", () => {
        const e = sequence();
        const failed = play(asked("One"), [
            e.start(),
            e.warning("MCP_UNREACHABLE", "CRM is down"),
            e.error("LLM_TIMEOUT", "Too slow"),
        ]);
        const next = userMessage(deepFreeze(failed), "Two");
        assert.equal(next.status, "thinking");
        assert.equal(next.error, null);
        assert.deepEqual(next.warnings, []);
        assert.deepEqual(next.messages.at(-1), {role: "user", text: "Two"});
        assert.equal(next.lastEventId, failed.lastEventId);
    });
});

describe("approval and confirmation", () => {
    function awaitingApproval() {
        const e = sequence();
        const state = play(asked("Delete the duplicates"), [
            e.start(),
            e.round(1),
            e.call("call_del", "delete_lead", {requires_approval: true}),
            e.call("call_find", "find_leads"),
            e.approval("call_del"),
        ]);
        return {e, state};
    }

    test("approval_required pauses the turn on the calls that need an answer", () => {
        const {state} = awaitingApproval();
        assert.equal(state.status, "awaiting_approval");
        assert.deepEqual(
            state.pendingApproval.map((call) => call.id),
            ["call_del"]
        );
        assert.deepEqual(
            tools(state).map((part) => [part.id, part.status]),
            [
                ["call_del", "pending_approval"],
                ["call_find", "running"],
            ]
        );
    });

    test("after a denial the resumed stream continues the same answer and the call shows as denied", () => {
        const {e, state} = awaitingApproval();
        const resumed = [
            e.start(),
            e.result("call_del", {ok: false, code: "TOOL_DENIED", ms: 0}),
            e.result("call_find"),
            e.round(2),
            e.text("Nothing deleted."),
            e.done(2),
        ];
        assert.deepEqual(statuses(state, resumed), [
            "running_tools",
            "running_tools",
            "thinking",
            "thinking",
            "thinking",
            "idle",
        ]);
        const end = play(state, resumed);
        assert.equal(end.pendingApproval, null);
        assert.equal(end.messages.length, 2);
        assert.deepEqual(
            lastAnswer(end).map((part) => part.status ?? part.text),
            ["denied", "done", "Nothing deleted."]
        );
        assert.equal(tools(end)[0].result.errorCode, "TOOL_DENIED");
    });

    test("an approved call runs when the resumed stream starts", () => {
        const {e, state} = awaitingApproval();
        const resumed = play(state, [e.start()]);
        assert.equal(resumed.status, "running_tools");
        assert.deepEqual(
            tools(resumed).map((part) => part.status),
            ["running", "running"]
        );
    });

    test("confirm_continue asks whether to go on past the 4th round, and the answer resumes the turn", () => {
        const e = sequence();
        const state = play(asked("Dig deep"), [
            e.start(),
            e.round(4),
            e.call("c4", "find_leads", {round: 4}),
            e.result("c4"),
            e.confirm(4),
        ]);
        assert.equal(state.status, "awaiting_confirmation");
        assert.deepEqual(state.confirm, {roundsUsed: 4, maxRounds: 5});
        const resumed = play(state, [e.start()]);
        assert.equal(resumed.confirm, null);
        assert.equal(resumed.status, "thinking");
        const end = play(resumed, [e.round(5), e.text("Done digging."), e.done(5)]);
        assert.equal(end.round, 5);
        assert.equal(end.status, "idle");
        assert.deepEqual(lastAnswer(end).at(-1), {kind: "text", text: "Done digging."});
    });
});

describe("failures", () => {
    test("an error ends the turn with a banner; calls cut off end as CANCELLED, finished ones stay", () => {
        const e = sequence();
        const state = play(asked("Go"), [
            e.start(),
            e.round(1),
            e.call("ok_call", "find_leads"),
            e.call("cut_call", "weather"),
            e.result("ok_call"),
            e.error("LLM_TIMEOUT", "The answer took longer than the assistant's 120 s limit."),
        ]);
        assert.equal(state.status, "error");
        assert.deepEqual(state.error, {
            code: "LLM_TIMEOUT",
            message: "The answer took longer than the assistant's 120 s limit.",
        });
        const [done, cut] = tools(state);
        assert.equal(done.status, "done");
        assert.equal(cut.status, "error");
        assert.equal(cut.result.errorCode, "CANCELLED");
        assert.equal(cut.durationMs, null);
    });

    test("warnings are listed once each and the turn goes on", () => {
        const e = sequence();
        const state = play(asked("Go"), [
            e.start(),
            e.warning("MCP_UNREACHABLE", "CRM is unavailable"),
            e.start(),
            e.warning("MCP_UNREACHABLE", "CRM is unavailable"),
            e.warning("MCP_AUTH_FAILED", "Wiki refused the token"),
        ]);
        assert.equal(state.status, "thinking");
        assert.deepEqual(
            state.warnings.map((w) => w.code),
            ["MCP_UNREACHABLE", "MCP_AUTH_FAILED"]
        );
    });

    test("stop: running calls end as CANCELLED and the composer opens", () => {
        const e = sequence();
        const state = play(asked("Go"), [
            e.start(),
            e.round(1),
            e.text("Looking"),
            e.call("a", "find_leads"),
            e.call("b", "weather"),
            e.result("a"),
        ]);
        const halted = stopped(deepFreeze(state));
        assert.equal(halted.status, "idle");
        assert.deepEqual(
            tools(halted).map((part) => [part.status, part.result.errorCode]),
            [
                ["done", null],
                ["error", "CANCELLED"],
            ]
        );
        assert.equal(tools(halted)[1].result.interrupted, "stopped");
    });

    test("stop outside a streaming turn changes nothing", () => {
        const e = sequence();
        const idle = play(asked("Go"), [e.start(), e.round(1), e.text("Hi"), e.done(1)]);
        assert.equal(stopped(idle), idle);
        const awaiting = play(asked("Go"), [
            e.start(),
            e.round(1),
            e.call("x", "delete_lead"),
            e.approval("x"),
        ]);
        assert.equal(stopped(awaiting), awaiting);
    });
});

describe("replay and history", () => {
    function twoTurns() {
        const e = sequence();
        const first = [
            e.start(),
            e.warning("MCP_UNREACHABLE", "Wiki is unavailable"),
            e.round(1),
            e.text("Checking."),
            e.call("call_1_0", "delete_lead", {requires_approval: true}),
            e.call("call_1_1", "find_leads"),
            e.approval("call_1_0"),
            e.start(),
            e.warning("MCP_UNREACHABLE", "Wiki is unavailable"),
            e.result("call_1_1", {ms: 40}),
            e.result("call_1_0", {ms: 900}),
            e.round(2),
            e.text("Deleted one."),
            e.done(2),
        ];
        // Prompted tool calls are named call_<round>_<i> again in the next turn.
        const second = [
            e.start(),
            e.round(1),
            e.call("call_1_0", "find_leads"),
            e.result("call_1_0", {ok: false, code: "MCP_EXECUTION_ERROR"}),
            e.round(2),
            e.text("Failed."),
            e.done(2),
        ];
        return {first, second};
    }

    test("events replayed after a reconnect are applied once", () => {
        const {first} = twoTurns();
        const live = play(asked("Clean up"), first.slice(0, 10));
        assert.equal(live.lastEventId, 10);
        let replayed = live;
        for (const event of first.slice(3, 10)) {
            const next = reduce(deepFreeze(replayed), event);
            assert.equal(next, replayed, `seq ${event.seq} applied twice`);
            replayed = next;
        }
        const end = play(replayed, first.slice(3)); // the server's answer to events?after=3 overlaps
        assert.deepEqual(end, play(asked("Clean up"), first));
        assert.equal(lastAnswer(end).filter((part) => part.kind === "text").length, 2);
    });

    test("an event without a sequence number is applied and leaves lastEventId alone", () => {
        const e = sequence();
        const state = play(asked("Go"), [e.start(), e.round(1)]);
        const next = reduce(deepFreeze(state), {type: "text", delta: "local"});
        assert.equal(next.lastEventId, 2);
        assert.deepEqual(lastAnswer(next), [{kind: "text", text: "local"}]);
    });

    test("an unknown event type is skipped but keeps its place in the sequence", () => {
        const e = sequence();
        const state = play(asked("Go"), [e.start()]);
        const next = reduce(deepFreeze(state), {type: "telemetry", seq: 2, anything: 1});
        assert.deepEqual(next, {...state, lastEventId: 2});
    });

    test("reloading a conversation shows what was streamed", () => {
        const {first, second} = twoTurns();
        let live = play(asked("Clean up"), first);
        live = toggleTool(live, "1:call_1_0");
        live = play(userMessage(live, "And the rest?"), second);
        const stored = [
            {role: "user", text: "Clean up", seq: 0},
            {role: "assistant", text: "Checking.Deleted one.", seq: 14}, // the events carry it
            {role: "user", text: "And the rest?", seq: 14},
        ];
        const reloaded = fromHistory(stored, [...first, ...second]);
        const collapsed = (state) => ({
            ...state,
            messages: state.messages.map((m) =>
                m.parts ? {...m, parts: m.parts.map((p) => ({...p, expanded: false}))} : m
            ),
        });
        assert.deepEqual(collapsed(reloaded), collapsed(live));
        assert.equal(reloaded.lastEventId, 21);
        assert.equal(reloaded.status, "idle");
    });

    test("reloading a conversation left awaiting approval offers the approval again", () => {
        const {first} = twoTurns();
        const reloaded = fromHistory([{role: "user", text: "Clean up", seq: 0}], first.slice(0, 7));
        assert.equal(reloaded.status, "awaiting_approval");
        assert.deepEqual(
            reloaded.pendingApproval.map((call) => call.id),
            ["call_1_0"]
        );
    });

    test("a user message whose turn has no events yet comes last", () => {
        const {first} = twoTurns();
        const reloaded = fromHistory(
            [
                {role: "user", text: "Clean up", seq: 0},
                {role: "user", text: "Hello?", seq: 14},
            ],
            first
        );
        assert.deepEqual(reloaded.messages.at(-1), {role: "user", text: "Hello?"});
        assert.equal(reloaded.messages.length, 3);
    });
});

describe("tool blocks", () => {
    test("a reused call id in a later turn updates that turn's block only", () => {
        const e = sequence();
        const turn1 = play(asked("One"), [
            e.start(),
            e.round(1),
            e.call("call_1_0", "find_leads"),
            e.result("call_1_0"),
            e.done(1),
        ]);
        const turn2 = play(userMessage(turn1, "Two"), [
            e.start(),
            e.round(1),
            e.call("call_1_0", "weather"),
            e.result("call_1_0", {ok: false, code: "MCP_UNREACHABLE"}),
        ]);
        const blocks = turn2.messages.filter((m) => m.role === "assistant").map((m) => m.parts[0]);
        assert.deepEqual(
            blocks.map((b) => [b.key, b.tool, b.status]),
            [
                ["1:call_1_0", "find_leads", "done"],
                ["3:call_1_0", "weather", "error"],
            ]
        );
    });

    test("toggleTool expands and collapses one block without touching the input", () => {
        const e = sequence();
        const state = deepFreeze(
            play(asked("Go"), [
                e.start(),
                e.round(1),
                e.call("a", "find_leads"),
                e.call("b", "weather"),
            ])
        );
        const opened = toggleTool(state, "1:b");
        assert.deepEqual(
            tools(opened).map((part) => part.expanded),
            [false, true]
        );
        assert.equal(tools(toggleTool(opened, "1:b"))[1].expanded, false);
        assert.equal(tools(state)[1].expanded, false);
    });
});

test("what SseParser yields reduces like the event it carries", () => {
    const parser = new SseParser();
    const wire =
        'event: start\nid: 1\ndata: {"type": "start", "conversation_id": 3, "assistant": "A", "max_rounds": 5}\n\n' +
        ": heartbeat\n\n" +
        'event: tool_call\nid: 2\ndata: {"type": "tool_call", "id": "c1", "name": "s__t", "tool": "t", "title": "T",\n' +
        'data: "server": "S", "arguments": {}, "round": 1, "requires_approval": false}\n\n';
    const events = parser.feed(wire).map(eventFromSse);
    assert.deepEqual(
        events.map((event) => [event.type, event.seq, event.id]),
        [
            ["start", 1, undefined],
            ["tool_call", 2, "c1"],
        ]
    );
    const state = play(asked("Go"), events);
    assert.deepEqual([state.conversationId, state.lastEventId, tools(state)[0].id], [3, 2, "c1"]);
});
