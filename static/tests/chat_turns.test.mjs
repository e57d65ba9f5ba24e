import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {TOOL_ANSWERED} from "../src/common/approval_gate.js";
import {CallStatus, ChatStatus, ErrorCode} from "../src/common/chat_status.js";
import {ChatTurns} from "../src/chat/logic/chat_turns.js";
import {UsageTotals} from "../src/chat/logic/usage_totals.js";
import {
    eventStream,
    refusal,
    ScriptedServer,
    settle,
    storeOn,
    until,
} from "./chat_store_harness.mjs";
import {sequence} from "./chat_state_events.mjs";

const texts = (chat) =>
    chat.messages
        .at(-1)
        .parts.filter((part) => part.kind === "text")
        .map((part) => part.text)
        .join("");

function chatOn(server) {
    const {store, seen} = storeOn(server);
    return {store, seen, turns: new ChatTurns(store)};
}

/** A stream that stays open until the request is aborted, as a turn still running does. */
function openStream(events, request) {
    const frames = eventStream(events).body.getReader();
    const body = new ReadableStream({
        async pull(controller) {
            const {value, done} = await frames.read();
            if (!done) {
                controller.enqueue(value);
                return;
            }
            await new Promise((resolve, reject) => {
                const abort = () => reject(new DOMException("aborted", "AbortError"));
                request.signal.aborted ? abort() : request.signal.addEventListener("abort", abort);
            });
        },
    });
    return new Response(body, {headers: {"Content-Type": "text/event-stream"}});
}

describe("ChatTurns on the store", () => {
    test("a message streams into the answer, names the conversation in the URL and the list", async () => {
        const server = new ScriptedServer();
        const {store, seen, turns} = chatOn(server);
        const e = sequence();
        server.streamed.push(eventStream([e.start(), e.round(1), e.text("Hello"), e.done(1)]));
        server.routes["/ai_mcp/conversations"] = [{id: 7, name: "Greeting"}];
        await turns.send("hi");
        assert.equal(server.fetched[0].url, "/ai_mcp/chat/stream");
        assert.equal(server.fetched[0].body.assistant_id, 3);
        assert.equal(server.fetched[0].body.message, "hi");
        assert.equal(store.chat.messages[0].text, "hi");
        assert.equal(texts(store.chat), "Hello");
        assert.equal(store.chat.status, ChatStatus.IDLE);
        assert.equal(store.state.busy, false);
        assert.deepEqual(seen.urls, [{active_id: 7}]);
        await settle();
        assert.deepEqual(store.state.conversations, [{id: 7, name: "Greeting"}]);
    });

    test("a stream that breaks is read again after the last event seen", async () => {
        const server = new ScriptedServer();
        const {store, turns} = chatOn(server);
        const e = sequence();
        server.streamed.push(eventStream([e.start(), e.text("Hel")], {broken: true}));
        server.streamed.push(eventStream([e.text("lo"), e.done(1)]));
        await turns.send("hi");
        assert.deepEqual(
            server.fetched.map(({method, url}) => `${method} ${url}`),
            ["POST /ai_mcp/chat/stream", "GET /ai_mcp/chat/7/events?after=2"]
        );
        assert.equal(texts(store.chat), "Hello");
        assert.equal(store.chat.status, ChatStatus.IDLE);
    });

    test("a connection that stays lost ends the turn with words the user reads", async () => {
        const server = new ScriptedServer();
        const {store, turns} = chatOn(server);
        const e = sequence();
        server.streamed.push(eventStream([e.start(), e.text("Hel")], {broken: true}));
        await turns.send("hi"); // every read again finds nothing scripted: the network is down
        assert.equal(server.fetched.length, 12);
        assert.equal(store.chat.status, ChatStatus.ERROR);
        assert.deepEqual(store.chat.error, {
            code: "NETWORK_ERROR",
            message: "words.error NETWORK_ERROR gave up",
        });
        assert.equal(store.state.busy, false);
        assert.equal(store.canSend, true);
    });

    test("a start a full pool refused is sent again under the same key, the status saying which try", async () => {
        const server = new ScriptedServer();
        const {store, turns} = chatOn(server);
        const e = sequence();
        const tries = [];
        const fullPool = () => {
            tries.push(store.state.startRetry);
            return new Response("<html>Internal Server Error</html>", {status: 500});
        };
        server.streamed.push(fullPool, fullPool, () => {
            tries.push(store.state.startRetry);
            return eventStream([e.start(), e.text("Hello"), e.done(1)]);
        });
        await turns.send("hi");
        assert.deepEqual(tries, [null, 1, 2]);
        assert.equal(store.state.startRetry, null);
        assert.equal(server.fetched.length, 3);
        assert.equal(new Set(server.fetched.map((request) => request.body.request_key)).size, 1);
        assert.equal(store.chat.messages.filter((message) => message.role === "user").length, 1);
        assert.equal(texts(store.chat), "Hello");
    });

    test("a message past a pace limit says when to send again; Retry sends it once, in its place", async () => {
        const server = new ScriptedServer();
        const {store, turns} = chatOn(server);
        const e = sequence();
        const sentence =
            "You have sent 10 messages in the last minute, the limit set by your administrator. " +
            "You can send the next one at 14:03:12.";
        server.streamed.push(refusal(429, {code: ErrorCode.PACE_LIMITED, message: sentence}));
        await turns.send("one more");
        assert.equal(server.fetched.length, 1, "a refusal is not sent again by itself");
        assert.equal(store.chat.status, ChatStatus.ERROR);
        assert.deepEqual(store.chat.error, {code: ErrorCode.PACE_LIMITED, message: sentence});
        assert.deepEqual(
            store.chat.messages.map((message) => [message.role, message.text]),
            [["user", "one more"]],
            "what the user wrote stays in the chat"
        );
        assert.equal(turns.canRetry, true);

        server.streamed.push(eventStream([e.start(), e.text("Done."), e.done(1)]));
        await turns.retry();
        assert.equal(server.fetched[1].body.message, "one more");
        assert.equal(server.fetched[1].body.request_key, server.fetched[0].body.request_key);
        assert.equal(store.chat.messages.filter((message) => message.role === "user").length, 1);
        assert.equal(texts(store.chat), "Done.");
        assert.equal(store.chat.error, null);
    });

    test("a message sent right after stop waits for the stopped turn, then goes", async () => {
        const server = new ScriptedServer();
        const {store, turns} = chatOn(server);
        const e = sequence();
        server.streamed.push((request) => openStream([e.start(), e.text("Long")], request));
        const first = turns.send("write a long answer");
        await until(() => store.chat.conversationId === 7);
        turns.stop();
        await first;
        const busy = refusal(409, {code: ErrorCode.CONVERSATION_BUSY, message: "Busy."});
        server.streamed.push(busy, eventStream([e.start(), e.text("Short."), e.done(1)]));
        await turns.send("a short one, please");
        assert.equal(server.fetched.length, 3);
        assert.equal(store.chat.error, null);
        assert.equal(texts(store.chat), "Short.");
    });

    test("stop ends the running calls and opens the composer again", async () => {
        const server = new ScriptedServer();
        const {store, turns} = chatOn(server);
        const e = sequence();
        server.streamed.push((request) => openStream([e.start(), e.call("c1", "search")], request));
        const running = turns.send("find leads");
        await until(() => store.chat.status === ChatStatus.RUNNING_TOOLS);
        assert.equal(store.state.busy, true);
        turns.stop();
        await running;
        const [block] = store.chat.messages.at(-1).parts.filter((part) => part.kind === "tool");
        assert.equal(block.status, CallStatus.ERROR);
        assert.equal(block.result.errorCode, ErrorCode.CANCELLED);
        assert.equal(store.chat.status, ChatStatus.IDLE);
        assert.equal(store.canSend, true);
    });

    test("the answer to an approval resumes the turn and releases the apps' calls of the tool", async () => {
        const server = new ScriptedServer();
        const {store, seen, turns} = chatOn(server);
        const e = sequence();
        server.streamed.push(
            eventStream([
                e.start(),
                e.call("c1", "delete", {requires_approval: true}),
                e.approval("c1"),
            ])
        );
        await turns.send("delete the lead");
        assert.equal(store.chat.status, ChatStatus.AWAITING_APPROVAL);
        server.streamed.push(
            eventStream([e.start(), e.result("c1"), e.text("Deleted."), e.done(1)])
        );
        await turns.resume({approvals: {c1: true}});
        assert.deepEqual(server.fetched[1].body, {conversation_id: 7, approvals: {c1: true}});
        assert.equal(server.fetched[1].url, "/ai_mcp/chat/resume");
        assert.equal(texts(store.chat), "Deleted.");
        assert.deepEqual(seen.triggered, [
            {
                name: TOOL_ANSWERED,
                payload: {conversationId: 7, server: "CRM", tool: "c1", app: null},
            },
        ]);
    });

    test("a message the server already stored opens the conversation it is in", async () => {
        const server = new ScriptedServer();
        const {store, seen, turns} = chatOn(server);
        const e = sequence();
        server.streamed.push(
            refusal(409, {
                code: ErrorCode.ALREADY_RECEIVED,
                message: "Received.",
                conversation_id: 7,
            })
        );
        server.routes["/ai_mcp/conversation/7/history"] = {
            conversation: {id: 7, assistant_id: 3, state: "idle"},
            messages: [{role: "user", text: "hi", seq: 0}],
            events: [e.start(), e.text("Hello"), e.done(1)],
        };
        await turns.send("hi");
        assert.equal(store.chat.conversationId, 7);
        assert.equal(store.chat.status, ChatStatus.IDLE);
        assert.equal(texts(store.chat), "Hello");
        assert.deepEqual(seen.urls, [{active_id: 7}]);
    });

    test("a conversation whose turn runs in another tab is followed until it ends", async () => {
        const server = new ScriptedServer();
        const {store, turns} = chatOn(server);
        const e = sequence();
        server.routes["/ai_mcp/conversation/7/history"] = {
            conversation: {id: 7, assistant_id: 3, state: "running"},
            messages: [{role: "user", text: "hi", seq: 0}],
            events: [e.start(), e.text("Hel")],
        };
        server.streamed.push(eventStream([e.text("lo"), e.done(1)]));
        await turns.openConversation(7, {push: false});
        assert.equal(store.chat.status, ChatStatus.THINKING);
        await until(() => store.chat.status === ChatStatus.IDLE);
        assert.equal(server.fetched[0].url, "/ai_mcp/chat/7/events?after=2");
        assert.equal(texts(store.chat), "Hello");
    });

    test("stop on a followed turn whose server stopped ends it and shows its end at once", async () => {
        const server = new ScriptedServer();
        const e = sequence();
        server.routes["/ai_mcp/conversation/7/history"] = {
            conversation: {id: 7, assistant_id: 3, state: "running"},
            messages: [{role: "user", text: "hi", seq: 0}],
            events: [e.start(), e.round(1)],
        };
        server.routes["/ai_mcp/chat/stop"] = {stopped: true};
        // the follow's polls find nothing new (the second one waits) until the stop; then the
        // error the server stored, numbered after the numbers the dead turn had reserved
        const ended = {...e.error("CANCELLED", "The answer was interrupted."), seq: 66};
        let stoppedYet = false;
        let release = null;
        const held = new Promise((resolve) => (release = resolve));
        server.fetch = async (url) => {
            server.fetched.push({url});
            if (!stoppedYet && server.fetched.length > 1) {
                await held;
            }
            return eventStream(stoppedYet ? [ended] : []);
        };
        const {store, turns} = chatOn(server);
        await turns.openConversation(7, {push: false});
        await until(() => server.fetched.length > 1);
        assert.equal(store.chat.status, ChatStatus.THINKING);
        stoppedYet = true;
        await turns.stop();
        assert.equal(store.chat.status, ChatStatus.ERROR, "shown at once, not at the next poll");
        release();
        assert.deepEqual(server.calls("/ai_mcp/chat/stop"), [{conversation_id: 7}]);
        assert.equal(store.chat.error.code, "CANCELLED");
        assert.equal(store.chat.lastEventId, 66);
    });

    test("stop on a turn that runs on elsewhere says so and goes on following it", async () => {
        const server = new ScriptedServer();
        const e = sequence();
        server.routes["/ai_mcp/conversation/7/history"] = {
            conversation: {id: 7, assistant_id: 3, state: "running"},
            messages: [{role: "user", text: "hi", seq: 0}],
            events: [e.start(), e.round(1)],
        };
        server.routes["/ai_mcp/chat/stop"] = {stopped: false};
        let stoppedYet = false;
        let release = null;
        const held = new Promise((resolve) => (release = resolve));
        server.fetch = async (url) => {
            server.fetched.push({url});
            if (!stoppedYet && server.fetched.length > 1) {
                await held;
            }
            return eventStream(stoppedYet ? [e.text("Hello"), e.done(1)] : []);
        };
        const {store, seen, turns} = chatOn(server);
        await turns.openConversation(7, {push: false});
        await until(() => server.fetched.length > 1);
        await turns.stop();
        assert.deepEqual(seen.notified, [{message: "words.runsElsewhere", type: "warning"}]);
        assert.equal(store.chat.status, ChatStatus.THINKING);
        stoppedYet = true;
        release();
        await until(() => store.chat.status === ChatStatus.IDLE);
        assert.equal(texts(store.chat), "Hello");
    });

    test("a tab whose stream broke shows the takeover and the next answer past a gap in numbers", async () => {
        const server = new ScriptedServer();
        const {store, turns} = chatOn(server);
        const e = sequence();
        server.streamed.push(eventStream([e.start(), e.round(1), e.text("Hel")], {broken: true}));
        // the dead turn reserved numbers up to 67: the takeover's error is 68, the next answer 69 on
        server.streamed.push(eventStream([{...e.error("CANCELLED", "interrupted"), seq: 68}]));
        await turns.send("hi");
        assert.equal(store.chat.error.code, "CANCELLED");
        const next = [
            {...e.start(), seq: 69},
            {...e.round(1), seq: 70},
            {...e.text("Again"), seq: 71},
            {...e.done(1), seq: 72},
        ];
        server.streamed.push(eventStream(next));
        await turns.send("again");
        assert.equal(texts(store.chat), "Again");
        assert.equal(store.chat.status, ChatStatus.IDLE);
    });

    test("a stored turn that never ended shows as interrupted; a missing one is not opened", async () => {
        const server = new ScriptedServer();
        const {store, seen, turns} = chatOn(server);
        const e = sequence();
        server.routes["/ai_mcp/conversation/7/history"] = {
            conversation: {id: 7, assistant_id: 3, state: "idle"},
            messages: [{role: "user", text: "hi", seq: 0}],
            events: [e.start(), e.text("Hel")],
        };
        await turns.openConversation(7);
        assert.deepEqual(store.chat.error, {code: "INTERRUPTED", message: "words.interrupted"});
        server.routes["/ai_mcp/conversation/8/history"] = new Error("404");
        await turns.openConversation(8);
        assert.equal(store.chat.conversationId, 7);
        assert.deepEqual(seen.notified, [{message: "words.notOpened", type: "danger"}]);
    });

    test("another user's conversation an AI manager opens is read only, until she starts a chat", async () => {
        const server = new ScriptedServer();
        const {store, turns} = chatOn(server);
        const e = sequence();
        server.routes["/ai_mcp/conversation/7/history"] = {
            conversation: {id: 7, assistant_id: 3, state: "idle", read_only: true},
            messages: [{role: "user", text: "Draft a welcome call", seq: 0}],
            events: [e.start(), e.text("Call them."), e.done()],
        };
        await turns.openConversation(7, {push: false});
        assert.equal(store.chat.status, ChatStatus.IDLE);
        assert.equal(store.canSend, false);
        turns.newChat();
        assert.equal(store.canSend, true);
    });

    test("a chat opened about a record starts its conversation with that record, once", async () => {
        const server = new ScriptedServer();
        const {store, turns} = chatOn(server);
        const e = sequence();
        const subject = {
            res_model: "res.partner",
            res_id: 14,
            model_name: "Contact",
            display_name: "Azure Interior",
            url: "/odoo/res.partner/14",
        };
        server.routes["/ai_mcp/subject"] = subject;
        assert.equal(await turns.newChatAbout("res.partner", 14), true);
        assert.deepEqual(server.calls("/ai_mcp/subject"), [{res_model: "res.partner", res_id: 14}]);
        assert.deepEqual(store.state.subject, subject);
        server.streamed.push(eventStream([e.start(), e.text("Hello"), e.done(1)]));
        server.streamed.push(eventStream([e.start(), e.text("Again"), e.done(1)]));
        await turns.send("who is it?");
        await turns.send("and then?");
        assert.equal(server.fetched[0].body.res_model, "res.partner");
        assert.equal(server.fetched[0].body.res_id, 14);
        assert.equal(server.fetched[1].body.conversation_id, 7);
        assert.equal(
            "res_model" in server.fetched[1].body,
            false,
            "a started conversation keeps its record"
        );
        turns.newChat();
        assert.equal(store.state.subject, null);
    });

    test("a record the server refuses is no subject; a stored conversation shows its own", async () => {
        const server = new ScriptedServer();
        const {store, turns} = chatOn(server);
        server.routes["/ai_mcp/subject"] = new Error("404");
        assert.equal(await turns.newChatAbout("res.partner", 99), false);
        assert.equal(store.state.subject, null);
        const subject = {res_model: "res.partner", res_id: 14, display_name: "Azure Interior"};
        server.routes["/ai_mcp/conversation/7/history"] = {
            conversation: {id: 7, assistant_id: 3, state: "idle", subject},
            messages: [],
            events: [],
        };
        await turns.openConversation(7, {push: false});
        assert.deepEqual(store.state.subject, subject);
    });
});

describe("Opening the chat", () => {
    /** The chat action's opening: its helpers on the store, then `start` and the totals. */
    async function openChat(server, activeId) {
        const {store} = storeOn(server);
        const turns = new ChatTurns(store);
        const usage = new UsageTotals(store);
        server.routes["/ai_mcp/assistants"] = [{id: 3, name: "Helpdesk"}];
        server.routes["/ai_mcp/conversations"] = [{id: 7, name: "Leads"}];
        server.routes["/ai_mcp/chat/usage"] = (params) => ({
            conversation: params.conversation_id ? {tokens: 5, costs: []} : null,
            month: {tokens: 50, costs: []},
        });
        await turns.start(activeId);
        usage.opened();
        await until(() => usage.state.month);
        return {store, usage};
    }

    test("on the conversation the URL names, each route is asked once", async () => {
        const server = new ScriptedServer();
        const e = sequence();
        server.routes["/ai_mcp/conversation/7/history"] = {
            conversation: {id: 7, assistant_id: 3, state: "idle"},
            messages: [{role: "user", text: "hi", seq: 0}],
            events: [e.start(), e.text("Hello"), e.done(1)],
        };
        const {store, usage} = await openChat(server, 7);
        assert.deepEqual(server.called.map((call) => call.route).sort(), [
            "/ai_mcp/assistants",
            "/ai_mcp/chat/usage",
            "/ai_mcp/conversation/7/history",
            "/ai_mcp/conversations",
        ]);
        assert.deepEqual(server.calls("/ai_mcp/chat/usage"), [{conversation_id: 7}]);
        assert.deepEqual(store.state.conversations, [{id: 7, name: "Leads"}]);
        assert.equal(store.chat.conversationId, 7);
        assert.deepEqual(usage.state.conversation, {tokens: 5, costs: []});
    });

    test("on a new chat, each route is asked once and the month's totals shown", async () => {
        const server = new ScriptedServer();
        const {store, usage} = await openChat(server, null);
        assert.deepEqual(server.called.map((call) => call.route).sort(), [
            "/ai_mcp/assistants",
            "/ai_mcp/chat/usage",
            "/ai_mcp/conversations",
        ]);
        assert.equal(store.state.assistantId, 3);
        assert.deepEqual(usage.state.month, {tokens: 50, costs: []});
    });

    test("a conversation that cannot be opened still shows the month's totals, read once", async () => {
        const server = new ScriptedServer();
        server.routes["/ai_mcp/conversation/9/history"] = new Error("not found");
        const {usage} = await openChat(server, 9);
        assert.deepEqual(server.calls("/ai_mcp/chat/usage"), [{}]);
        assert.deepEqual(usage.state.month, {tokens: 50, costs: []});
    });
});
