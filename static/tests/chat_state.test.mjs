import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {
    cancelRequested,
    eventFromSse,
    fromHistory,
    initialChatState,
    reduce,
    signedIn,
    signInAnswer,
    signInDeclined,
    signInOpened,
    stopped,
    toggleTool,
    userMessage,
} from "../src/logic/chat_state.js";
import {SseParser} from "../src/logic/sse_parser.js";

// Events as services/events.py's data() sends them, numbered as the conversation's sequence.
function sequence(first = 1) {
    let seq = first - 1;
    const next = (type, payload = {}) => ({type, ...payload, seq: ++seq});
    return {
        start: (maxRounds = 5) =>
            next("start", {conversation_id: 7, assistant: "Helpdesk", max_rounds: maxRounds}),
        round: (n, max = 5) => next("round", {n, max}),
        text: (delta) => next("text", {delta}),
        call: (id, tool, extra = {}) =>
            next("tool_call", {
                id,
                name: `crm__${tool}`,
                tool,
                title: tool.replace("_", " "),
                server: "CRM",
                arguments: {query: id},
                round: 1,
                requires_approval: false,
                ...extra,
            }),
        result: (
            id,
            {ok = true, code = null, ms = 10, content = [{type: "text", text: `${id} ok`}]} = {}
        ) =>
            next("tool_result", {
                id,
                ok,
                content: ok ? content : [],
                model_text: "...",
                error_code: code,
                error_message: code && `${code} happened`,
                duration_ms: ms,
            }),
        input: (id, args, extra = {}) =>
            next("tool_input", {
                id,
                name: "charts__bar",
                tool: "bar",
                title: "Bar chart",
                server: "Charts",
                app: "ui://charts/bar.html",
                arguments: args,
                ...extra,
            }),
        approval: (...ids) =>
            next("approval_required", {
                calls: ids.map((id) => ({
                    id,
                    tool: id,
                    title: id,
                    server: "CRM",
                    arguments: {query: id},
                })),
            }),
        signIn: (servers, ...ids) =>
            next("auth_required", {
                servers,
                calls: ids.map((id) => ({
                    id,
                    tool: id,
                    title: id,
                    server: "Notes",
                    arguments: {query: id},
                })),
            }),
        confirm: (used, max = 5) => next("confirm_continue", {rounds_used: used, max_rounds: max}),
        progress: (id, progress, total = null, message = null, ms = 100) =>
            next("tool_progress", {id, progress, total, message, elapsed_ms: ms}),
        log: (id, level, message) => next("tool_log", {id, level, logger: null, message}),
        ask: (id, elicitation, extra = {}) =>
            next("elicitation_required", {
                id,
                elicitation,
                server: "CRM",
                mode: "form",
                message: "Which one?",
                requested_schema: {type: "object", properties: {pick: {type: "string"}}},
                url: null,
                host: null,
                ...extra,
            }),
        answered: (id, elicitation, action = "accept", extra = {}) =>
            next("elicitation_done", {id, elicitation, action, ...extra}),
        warning: (code, message) => next("warning", {code, message}),
        error: (code, message) => next("error", {code, message}),
        done: (rounds) =>
            next("done", {message_id: 42, usage: {input_tokens: 100, output_tokens: 20}, rounds}),
    };
}

function deepFreeze(value) {
    if (value && typeof value === "object" && !Object.isFrozen(value)) {
        Object.freeze(value);
        Object.values(value).forEach(deepFreeze);
    }
    return value;
}

// Every state is frozen before it is reduced: a reducer that mutates its input throws.
function play(state, events) {
    return events.reduce((current, event) => reduce(deepFreeze(current), event), state);
}

function statuses(state, events) {
    const seen = [];
    events.reduce((current, event) => {
        const next = reduce(deepFreeze(current), event);
        seen.push(next.status);
        return next;
    }, state);
    return seen;
}

const lastAnswer = (state) => state.messages.at(-1).parts;
const tools = (state) => lastAnswer(state).filter((part) => part.kind === "tool");
const asked = (text) => userMessage(initialChatState(), text);

describe("a streamed turn", () => {
    test("two rounds with concurrent tool calls give ordered blocks with statuses and durations", () => {
        const e = sequence();
        const events = [
            e.start(),
            e.round(1),
            e.text("Let me "),
            e.text("look."),
            e.call("call_a", "find_leads"),
            e.call("call_b", "weather"),
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

/** Two calls of round 1 running, and how to find one's block. */
function running() {
    const e = sequence();
    const state = [
        e.start(),
        e.round(1),
        e.call("call_a", "export"),
        e.call("call_b", "find_leads"),
    ].reduce(reduce, userMessage(initialChatState(), "Export"));
    return {e, state};
}
const block = (state, id) => state.messages.at(-1).parts.find((part) => part.id === id);

describe("a running call: progress, server messages and stopping it", () => {
    test("the latest progress replaces the previous one, on its own call only", () => {
        const {e, state} = running();
        const after = [
            e.progress("call_a", 1, 10, "step 1"),
            e.progress("call_a", 7, 10, "step 7", 1500),
        ].reduce(reduce, state);
        assert.deepEqual(block(after, "call_a").progress, {
            progress: 7,
            total: 10,
            message: "step 7",
            elapsedMs: 1500,
        });
        assert.equal(block(after, "call_b").progress, null);
        assert.equal(after.status, "running_tools");
    });

    test("progress without a total is kept as such (an indeterminate bar)", () => {
        const {e, state} = running();
        const after = reduce(state, e.progress("call_a", 3));
        assert.deepEqual(block(after, "call_a").progress, {
            progress: 3,
            total: null,
            message: null,
            elapsedMs: 100,
        });
    });

    test("progress that arrives after the result changes nothing", () => {
        const {e, state} = running();
        const after = [e.result("call_a"), e.progress("call_a", 9, 10)].reduce(reduce, state);
        assert.equal(block(after, "call_a").progress, null);
        assert.equal(block(after, "call_a").status, "done");
    });

    test("server log messages are listed in order with their level", () => {
        const {e, state} = running();
        const after = [
            e.log("call_a", "info", "reading"),
            e.log("call_a", "warning", "slow disk"),
        ].reduce(reduce, state);
        assert.deepEqual(block(after, "call_a").logs, [
            {level: "info", logger: null, message: "reading"},
            {level: "warning", logger: null, message: "slow disk"},
        ]);
        assert.deepEqual(block(after, "call_b").logs, []);
    });

    test("a stop request marks the call stopping; its CANCELLED result makes it cancelled, the other call runs on", () => {
        const {e, state} = running();
        const key = block(state, "call_a").key;
        const stopping = cancelRequested(state, key);
        assert.equal(block(stopping, "call_a").cancelling, true);
        assert.equal(block(stopping, "call_b").cancelling, false);
        const after = reduce(stopping, e.result("call_a", {ok: false, code: "CANCELLED"}));
        assert.equal(block(after, "call_a").status, "cancelled");
        assert.equal(block(after, "call_a").cancelling, false);
        assert.equal(block(after, "call_b").status, "running");
        assert.equal(after.status, "running_tools");
    });

    test("a failed call whose code names no status of its own is an error, whatever the code", () => {
        const {e, state} = running();
        const after = reduce(state, e.result("call_a", {ok: false, code: "toString"}));
        assert.equal(block(after, "call_a").status, "error");
    });

    test("a finished call cannot be asked to stop", () => {
        const {e, state} = running();
        const done = reduce(state, e.result("call_a"));
        assert.equal(
            block(cancelRequested(done, block(done, "call_a").key), "call_a").cancelling,
            false
        );
    });

    test("a replayed conversation shows the same progress and messages as the stream did", () => {
        const e = sequence();
        const events = [
            e.start(),
            e.round(1),
            e.call("call_a", "export"),
            e.progress("call_a", 5, 5, "done"),
            e.log("call_a", "info", "ok"),
            e.result("call_a"),
        ];
        const streamed = events.reduce(reduce, userMessage(initialChatState(), "Export"));
        const replayed = fromHistory([{role: "user", text: "Export", seq: 0}], events);
        assert.deepEqual(replayed.messages, streamed.messages);
    });
});

describe("a server's question during a call", () => {
    test("the question opens on its call and closes when answered", () => {
        const {e, state} = running();
        const open = reduce(state, e.ask("call_a", "q1"));
        assert.deepEqual(block(open, "call_a").question, {
            elicitation: "q1",
            mode: "form",
            message: "Which one?",
            server: "CRM",
            requestedSchema: {type: "object", properties: {pick: {type: "string"}}},
            url: null,
            host: null,
        });
        assert.equal(block(open, "call_b").question, null);
        assert.equal(open.status, "running_tools");
        assert.equal(block(reduce(open, e.answered("call_a", "q1")), "call_a").question, null);
    });

    test("a URL question keeps its host; an answer to another question leaves it open", () => {
        const {e, state} = running();
        const open = reduce(
            state,
            e.ask("call_a", "q2", {
                mode: "url",
                url: "https://pay.example.com/x",
                host: "pay.example.com",
                requested_schema: null,
            })
        );
        assert.equal(block(open, "call_a").question.host, "pay.example.com");
        assert.equal(
            block(reduce(open, e.answered("call_a", "other")), "call_a").question.elicitation,
            "q2"
        );
    });

    test("a question cancelled unanswered at its limit leaves a note on its block, which the result keeps", () => {
        const {e, state} = running();
        const open = reduce(state, e.ask("call_a", "q4"));
        assert.equal(block(open, "call_a").note, null);
        const note = "No answer within 10 minutes: the question was cancelled.";
        const lapsed = reduce(open, e.answered("call_a", "q4", "cancel", {note}));
        assert.equal(block(lapsed, "call_a").question, null);
        assert.equal(block(lapsed, "call_a").note, note);
        assert.equal(block(reduce(lapsed, e.result("call_a")), "call_a").note, note);
    });

    test("the call's result or the end of the turn closes its question", () => {
        const {e, state} = running();
        const open = reduce(state, e.ask("call_a", "q3"));
        assert.equal(
            block(reduce(open, e.result("call_a", {ok: false, code: "MCP_TIMEOUT"})), "call_a")
                .question,
            null
        );
        assert.equal(block(reduce(open, e.error("CANCELLED", "stopped")), "call_a").question, null);
        assert.equal(block(stopped(open), "call_a").question, null);
    });
});

/** A server of an auth_required event, as services/events.py's SignIn sends it. */
function signInServer(id, name, extra = {}) {
    const url = "/ai_mcp/oauth/start?server_id=" + id + "&conversation_id=7";
    return {
        server_id: id,
        server: name,
        url,
        step_up: false,
        scope: null,
        message: "Sign in to " + name + " to use its tools.",
        ...extra,
    };
}

describe("a turn waiting for a sign-in", () => {
    /** Round 1 calls Notes twice and CRM once; Notes and Wiki need the user's sign-in. */
    function awaitingSignIn() {
        const e = sequence();
        const events = [
            e.start(),
            e.round(1),
            e.call("call_note", "read_note", {server: "Notes"}),
            e.call("call_wiki", "search_wiki", {server: "Wiki"}),
            e.call("call_crm", "find_leads"),
            e.result("call_crm"),
            e.signIn([signInServer(7, "Notes"), signInServer(9, "Wiki")], "call_note", "call_wiki"),
        ];
        return {e, events, state: play(asked("Read my notes"), events)};
    }

    test("auth_required pauses the turn on the servers to sign in to and the calls that wait for them", () => {
        const {state} = awaitingSignIn();
        assert.equal(state.status, "awaiting_auth");
        assert.deepEqual(state.pendingSignIn.servers, [
            {
                serverId: 7,
                server: "Notes",
                url: "/ai_mcp/oauth/start?server_id=7&conversation_id=7",
                stepUp: false,
                scope: null,
                message: "Sign in to Notes to use its tools.",
                opened: false,
                outcome: null,
            },
            {
                serverId: 9,
                server: "Wiki",
                url: "/ai_mcp/oauth/start?server_id=9&conversation_id=7",
                stepUp: false,
                scope: null,
                message: "Sign in to Wiki to use its tools.",
                opened: false,
                outcome: null,
            },
        ]);
        assert.deepEqual(
            state.pendingSignIn.calls.map((call) => call.id),
            ["call_note", "call_wiki"]
        );
        assert.deepEqual(
            tools(state).map((part) => [part.id, part.status]),
            [
                ["call_note", "pending_sign_in"],
                ["call_wiki", "pending_sign_in"],
                ["call_crm", "done"],
            ]
        );
        assert.equal(stopped(state), state, "nothing streams: stop has nothing to stop");
    });

    test("a step-up keeps its flag and the permission asked; a plain sign-in has none", () => {
        const e = sequence();
        const state = play(asked("Edit my note"), [
            e.start(),
            e.round(1),
            e.call("call_edit", "edit_note", {server: "Notes"}),
            e.signIn(
                [
                    signInServer(7, "Notes", {
                        step_up: true,
                        scope: "notes:write",
                        message: "Notes needs more.",
                    }),
                    signInServer(9, "Wiki"),
                ],
                "call_edit"
            ),
        ]);
        const [notes, wiki] = state.pendingSignIn.servers;
        assert.deepEqual(
            [notes.stepUp, notes.scope, notes.message],
            [true, "notes:write", "Notes needs more."]
        );
        assert.deepEqual([wiki.stepUp, wiki.scope], [false, null]);
    });

    test("opening a sign-in, signing in and declining mark that server only", () => {
        const {state} = awaitingSignIn();
        const opened = signInOpened(deepFreeze(state), 7);
        assert.deepEqual(
            opened.pendingSignIn.servers.map((server) => [
                server.serverId,
                server.opened,
                server.outcome,
            ]),
            [
                [7, true, null],
                [9, false, null],
            ]
        );
        const answered = signInDeclined(deepFreeze(signedIn(deepFreeze(opened), 7)), 9);
        assert.deepEqual(
            answered.pendingSignIn.servers.map((server) => [server.serverId, server.outcome]),
            [
                [7, "signed_in"],
                [9, "declined"],
            ]
        );
        assert.equal(answered.status, "awaiting_auth", "only the resume ends the pause");
    });

    test("a sign-in for a server the turn does not wait for, or when no turn waits, changes nothing", () => {
        const {e, state} = awaitingSignIn();
        assert.equal(signedIn(state, 42), state);
        const idle = play(state, [e.start(), e.done(2)]);
        assert.equal(signedIn(idle, 7), idle);
        assert.equal(signInDeclined(idle, 7), idle);
    });

    test("the resume answer waits for every server, then lists the declined ones", () => {
        const {state} = awaitingSignIn();
        assert.equal(signInAnswer(state), null);
        const one = signedIn(state, 7);
        assert.equal(signInAnswer(one), null, "Wiki has no answer yet");
        assert.deepEqual(signInAnswer(signInDeclined(one, 9)), {sign_in: {declined: [9]}});
        assert.deepEqual(signInAnswer(signedIn(one, 9)), {sign_in: {declined: []}});
        assert.deepEqual(signInAnswer(signInDeclined(signInDeclined(state, 7), 9)), {
            sign_in: {declined: [7, 9]},
        });
    });

    test("a server declined and then signed in after all is not declined", () => {
        const {state} = awaitingSignIn();
        const changed = signedIn(signInDeclined(signedIn(state, 9), 7), 7);
        assert.deepEqual(signInAnswer(changed), {sign_in: {declined: []}});
    });

    test("the resume runs the waiting calls in the same answer, and done ends the pause", () => {
        const {e, state} = awaitingSignIn();
        const resumed = play(state, [e.start()]);
        assert.equal(resumed.pendingSignIn, null);
        assert.equal(resumed.status, "running_tools");
        assert.deepEqual(
            tools(resumed).map((part) => part.status),
            ["running", "running", "done"]
        );
        assert.equal(signInAnswer(resumed), null);
        const end = play(resumed, [
            e.result("call_note"),
            e.result("call_wiki", {ok: false, code: "MCP_AUTH_REQUIRED"}), // the user went on without Wiki
            e.round(2),
            e.text("Your notes say hi."),
            e.done(2),
        ]);
        assert.equal(end.status, "idle");
        assert.equal(end.pendingSignIn, null);
        assert.equal(end.messages.length, 2);
        assert.deepEqual(
            lastAnswer(end).map((part) => part.status ?? part.text),
            ["done", "error", "done", "Your notes say hi."]
        );
    });

    test("a done straight after the pause clears it", () => {
        const {e, state} = awaitingSignIn();
        const end = play(state, [e.done(1)]);
        assert.equal(end.status, "idle");
        assert.equal(end.pendingSignIn, null);
        assert.equal(signInAnswer(signedIn(signedIn(end, 7), 9)), null);
    });

    test("reloading a conversation left waiting for a sign-in shows the same cards and waiting calls", () => {
        const {events, state} = awaitingSignIn();
        const reloaded = fromHistory([{role: "user", text: "Read my notes", seq: 0}], events);
        assert.equal(reloaded.status, "awaiting_auth");
        assert.deepEqual(reloaded.pendingSignIn, state.pendingSignIn);
        assert.deepEqual(reloaded.messages, state.messages);
        assert.equal(
            reloaded.pendingSignIn.servers[0].outcome,
            null,
            "a reload forgets what was clicked: the card asks again"
        );
    });
});

describe("a tool rendered by an app", () => {
    const APP = "ui://charts/bar.html";

    test("streamed arguments open a preparing block that the tool_call then runs, once", () => {
        const e = sequence();
        let state = play(asked("Chart my sales"), [e.start(), e.round(1)]);
        state = play(state, [e.input("c1", {title: "Sal"})]);
        assert.deepEqual(
            tools(state).map((b) => [b.id, b.status, b.app, b.arguments, b.expanded]),
            [["c1", "preparing", APP, {title: "Sal"}, true]]
        );
        assert.equal(state.status, "thinking");
        state = play(state, [e.input("c1", {title: "Sales", values: [1]})]);
        assert.deepEqual(tools(state)[0].arguments, {title: "Sales", values: [1]});

        state = play(state, [
            e.call("c1", "bar", {app: APP, arguments: {title: "Sales", values: [1, 2]}}),
        ]);
        assert.equal(tools(state).length, 1);
        assert.deepEqual(
            [tools(state)[0].status, tools(state)[0].arguments, tools(state)[0].key],
            ["running", {title: "Sales", values: [1, 2]}, "1:c1"]
        );
        assert.equal(state.status, "running_tools");

        state = play(state, [e.result("c1")]);
        assert.equal(tools(state)[0].status, "done");
    });

    test("a block the user collapsed while it was prepared stays collapsed when it runs", () => {
        const e = sequence();
        let state = play(asked("Chart"), [e.start(), e.input("c1", {})]);
        state = toggleTool(state, "1:c1");
        state = play(state, [e.call("c1", "bar", {app: APP})]);
        assert.equal(tools(state)[0].expanded, false);
    });

    test("a tool_input after its tool_call changes nothing", () => {
        const e = sequence();
        const state = play(asked("Chart"), [
            e.start(),
            e.call("c1", "bar", {app: APP, arguments: {title: "Final"}}),
            e.input("c1", {title: "Fin"}),
        ]);
        assert.deepEqual(tools(state)[0].arguments, {title: "Final"});
        assert.equal(tools(state)[0].status, "running");
    });

    test("a tool without an app has no app and starts collapsed", () => {
        const e = sequence();
        const state = play(asked("Go"), [e.start(), e.call("a", "find_leads")]);
        assert.deepEqual([tools(state)[0].app, tools(state)[0].expanded], [null, false]);
    });

    test("stopping while the model still writes a call's arguments ends that block too", () => {
        const e = sequence();
        const state = stopped(play(asked("Chart"), [e.start(), e.round(1), e.input("c1", {})]));
        assert.deepEqual(
            [tools(state)[0].status, tools(state)[0].result.interrupted],
            ["error", "stopped"]
        );
    });

    test("a message an app sent names the app, live and when the conversation is reopened", () => {
        const live = userMessage(initialChatState(), "Show May", {
            callId: "c1",
            title: "Bar chart",
        });
        assert.deepEqual(live.messages.at(-1), {
            role: "user",
            text: "Show May",
            app: {callId: "c1", title: "Bar chart"},
        });
        const reloaded = fromHistory(
            [
                {role: "user", text: "Chart", seq: 0},
                {role: "user", text: "Show May", seq: 0, app: {call_id: "c1", title: "Bar chart"}},
            ],
            []
        );
        assert.deepEqual(
            reloaded.messages.map((m) => m.app ?? null),
            [null, {callId: "c1", title: "Bar chart"}]
        );
    });

    test("a reopened conversation shows the app's block as the stream did", () => {
        const e = sequence();
        const events = [
            e.start(),
            e.round(1),
            e.input("c1", {title: "S"}),
            e.call("c1", "bar", {app: APP}),
            e.result("c1"),
            e.done(1),
        ];
        const live = play(asked("Chart"), events);
        const reloaded = fromHistory([{role: "user", text: "Chart", seq: 0}], events);
        assert.deepEqual(reloaded.messages, live.messages);
    });
});
