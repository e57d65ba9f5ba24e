/** The chat state of running calls: progress, a server's questions, sign-ins, and tools rendered by apps. */

import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {
    cancelRequested,
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
} from "../src/chat/logic/chat_state.js";
import {deepFreeze, sequence, play, lastAnswer, tools, asked} from "./chat_state_events.mjs";

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
            task: false,
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

describe("a call its server runs as a task that outlives the turn", () => {
    test("the task's result, added after the turn, fills the call's block in its earlier answer", () => {
        const e = sequence();
        let state = play(asked("Compute the report"), [
            e.start(),
            e.round(1),
            e.call("call_t", "compute"),
            e.result("call_t", {content: [{type: "text", text: "still running"}]}),
            e.text("It is still running."),
            e.done(1),
        ]);
        state = play(userMessage(state, "Anything else?"), [e.start(), e.text("No."), e.done(0)]);
        const late = {
            type: "task_result",
            seq: 99,
            id: "call_t",
            tool: "compute",
            status: "completed",
            ok: true,
            content: [{type: "text", text: "Computed the report"}],
            model_text: "Computed the report",
        };
        const after = reduce(deepFreeze(state), late);
        const earlier = after.messages.find((m) => m.role === "assistant");
        const shown = earlier.parts.find((part) => part.id === "call_t");
        assert.deepEqual(shown.result.content, [{type: "text", text: "Computed the report"}]);
        assert.equal(shown.status, "done");
        assert.equal(after.status, state.status);
        assert.equal(after.messages.at(-1), state.messages.at(-1));
    });

    test("a block whose task still runs after its turn can be stopped, and says cancelled once it ended", () => {
        const e = sequence();
        const leftRunning = {task_id: "t-1", server_key: "db/mcp.server/7", status: "working"};
        let state = play(asked("Export the ledger"), [
            e.start(),
            e.round(1),
            e.call("call_t", "hold"),
            e.result("call_t", {
                content: [{type: "text", text: "still running"}],
                task: leftRunning,
            }),
            e.text("It goes on on the server."),
            e.done(1),
        ]);
        state = play(userMessage(state, "Thanks"), [
            e.start(),
            e.text("You are welcome."),
            e.done(0),
        ]);
        const theBlock = () =>
            state.messages
                .find((m) => m.role === "assistant")
                .parts.find((part) => part.id === "call_t");
        assert.equal(theBlock().status, "done");
        assert.equal(theBlock().taskRunning, true, "the block offers its stop button");
        state = cancelRequested(deepFreeze(state), theBlock().key);
        assert.equal(theBlock().cancelling, true, "stopping, in an earlier answer than the last");
        state = reduce(deepFreeze(state), {
            type: "task_result",
            seq: 99,
            id: "call_t",
            tool: "hold",
            status: "cancelled",
            ok: false,
            content: [{type: "text", text: "The task was cancelled: Cancelled by the client."}],
            model_text: "The task was cancelled: Cancelled by the client.",
        });
        assert.equal(theBlock().status, "cancelled");
        assert.equal(theBlock().taskRunning, false);
        assert.equal(theBlock().cancelling, false);
    });

    test("a call that ended without a task has nothing left to stop", () => {
        const e = sequence();
        const state = play(asked("Compute"), [
            e.start(),
            e.round(1),
            e.call("c1", "compute"),
            e.result("c1"),
            e.done(1),
        ]);
        const shown = state.messages
            .find((m) => m.role === "assistant")
            .parts.find((part) => part.id === "c1");
        assert.ok(!shown.taskRunning);
        const after = cancelRequested(deepFreeze(state), shown.key);
        const kept = after.messages
            .find((m) => m.role === "assistant")
            .parts.find((part) => part.id === "c1");
        assert.notEqual(kept.cancelling, true);
    });
});
