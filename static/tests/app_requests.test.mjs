import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {AppRequestError, AppRequests} from "../src/apps/logic/app_requests.js";
import {TOOL_ANSWERED} from "../src/common/approval_gate.js";
import {ChatStatus, ErrorCode} from "../src/common/chat_status.js";
import {ChatTurns} from "../src/chat/logic/chat_turns.js";
import {eventStream, ScriptedServer, settle, storeOn, until} from "./chat_store_harness.mjs";
import {sequence} from "./chat_state_events.mjs";

const COUNTER = {conversationId: 7, callId: "a1", server: "CRM", app: "ui://crm/counter.html"};

/** What the user sees of an app's requests, scripted: the questions asked, in order, and the
 * answers the user gives (`agree` to a link or a download). */
class ScriptedAsk {
    constructor({agree = true} = {}) {
        this.agree = agree;
        this.asked = [];
        this.open = new Map(); // tool -> answers its open approval question
        this.saved = [];
    }

    title() {
        return "Counter";
    }

    leaveFullscreen() {
        this.asked.push("inline");
    }

    refusal(error) {
        return `refused ${error.code}`;
    }

    declined(tool) {
        return `declined ${tool}`;
    }

    approval({tool, arguments: args}) {
        this.asked.push({approval: tool.name, arguments: args});
        let answer = null;
        const choice = new Promise((resolve) => (answer = resolve));
        this.open.set(tool.name, answer);
        return {choice, close: () => answer("deny")};
    }

    async openLink(link) {
        this.asked.push({link: link.url});
        return this.agree;
    }

    async download(files) {
        this.asked.push({download: files.map((file) => file.name)});
        return this.agree;
    }

    save(file) {
        this.saved.push(file.name);
    }
}

/** /ai_mcp/app/call_tool refusing every call not approved: what a tool needing approval answers. */
function needsApproval(server, tool) {
    server.routes["/ai_mcp/app/call_tool"] = (params) =>
        params.approved
            ? {content: [{type: "text", text: `${params.name} ran (${params.approved})`}]}
            : {error: {code: ErrorCode.APPROVAL_REQUIRED, tool: {name: tool, title: tool}}};
}

function appOn(server, call = COUNTER, ask = new ScriptedAsk()) {
    const {store, seen} = storeOn(server);
    const turns = new ChatTurns(store);
    return {store, seen, turns, ask, requests: new AppRequests(store, turns, call, ask)};
}

describe("AppRequests on the store", () => {
    test("a call needing approval asks the user; allowed for the conversation, other apps' questions about the tool close", async () => {
        const server = new ScriptedServer();
        needsApproval(server, "add");
        const {store, turns, seen, ask, requests} = appOn(server);
        const otherAsk = new ScriptedAsk();
        const other = new AppRequests(
            store,
            turns,
            {...COUNTER, callId: "a2", app: "ui://crm/board.html"},
            otherAsk
        );
        const othersCall = other.callTool({name: "add", arguments: {n: 2}});
        const call = requests.callTool({name: "add", arguments: {n: 1}});
        await until(() => ask.open.has("add") && otherAsk.open.has("add"));
        assert.deepEqual(ask.asked, [{approval: "add", arguments: '{\n  "n": 1\n}'}]);
        ask.open.get("add")("conversation");
        assert.deepEqual(await call, {content: [{type: "text", text: "add ran (conversation)"}]});
        assert.deepEqual(seen.triggered, [
            {
                name: TOOL_ANSWERED,
                payload: {conversationId: 7, server: "CRM", tool: "add", app: null},
            },
        ]);
        // the other app's question was released: its call is sent again, unanswered
        server.routes["/ai_mcp/app/call_tool"] = () => ({content: [{type: "text", text: "ok"}]});
        assert.deepEqual(await othersCall, {content: [{type: "text", text: "ok"}]});
        const sent = server.calls("/ai_mcp/app/call_tool");
        assert.deepEqual(sent[2], {
            conversation_id: 7,
            call_id: "a1",
            name: "add",
            arguments: {n: 1},
            approved: "conversation",
        });
        assert.deepEqual(sent[3].call_id, "a2");
        assert.equal(sent[3].approved, false);
        requests.dispose();
        other.dispose();
    });

    test("while the model's call of the tool waits for the user, an app's call of it waits for that answer, then runs", async () => {
        const server = new ScriptedServer();
        const {store, turns, ask, requests} = appOn(server);
        const e = sequence();
        server.streamed.push(
            eventStream([
                e.start(),
                e.call("c1", "c1", {requires_approval: true}),
                e.approval("c1"),
            ])
        );
        await turns.send("count the leads");
        assert.equal(store.chat.status, ChatStatus.AWAITING_APPROVAL);
        needsApproval(server, "c1");
        const call = requests.callTool({name: "c1", arguments: {}});
        await until(() => requests.state.waitingFor.length);
        assert.deepEqual(requests.state.waitingFor, ["c1"]);
        // the user allows the model's call for the conversation: the server remembers it
        server.routes["/ai_mcp/app/call_tool"] = () => ({content: [{type: "text", text: "ran"}]});
        server.streamed.push(eventStream([e.start(), e.result("c1"), e.done(1)]));
        await turns.resume({approvals: {c1: "conversation"}});
        assert.deepEqual(await call, {content: [{type: "text", text: "ran"}]});
        assert.deepEqual(requests.state.waitingFor, []);
        assert.deepEqual(ask.asked, []); // no dialog over the model's question
        requests.dispose();
    });

    test("a call the user declines is the app's error, and nothing is remembered", async () => {
        const server = new ScriptedServer();
        needsApproval(server, "add");
        const {seen, ask, requests} = appOn(server);
        const call = requests.callTool({name: "add", arguments: {n: 1}});
        await until(() => ask.open.has("add"));
        ask.open.get("add")("deny");
        assert.deepEqual(await call, {
            content: [{type: "text", text: "declined add"}],
            isError: true,
        });
        assert.deepEqual(seen.triggered, []);
        assert.equal(server.calls("/ai_mcp/app/call_tool").length, 1);
        requests.dispose();
    });

    test("an app's message goes as the user's, naming its call, and the app leaves fullscreen", async () => {
        const server = new ScriptedServer();
        const {store, ask, requests} = appOn(server);
        const e = sequence();
        server.streamed.push(eventStream([e.start(), e.text("Added."), e.done(1)]));
        const answer = await requests.message({
            role: "user",
            content: [{type: "text", text: "add one"}],
        });
        assert.deepEqual(answer, {});
        assert.deepEqual(ask.asked, ["inline"]);
        await until(() => store.chat.status === ChatStatus.IDLE);
        assert.equal(server.fetched[0].body.app_call_id, "a1");
        assert.deepEqual(store.chat.messages[0].app, {callId: "a1", title: "Counter"});
        requests.dispose();
    });

    test("while an answer streams an app's message is refused, and the app is told why", async () => {
        const server = new ScriptedServer();
        const {store, requests} = appOn(server);
        store.state.busy = true;
        const answer = await requests.message({content: [{type: "text", text: "add one"}]});
        assert.deepEqual(answer, {isError: true, message: "words.appBusy Counter"});
        assert.deepEqual(server.fetched, []);
        requests.dispose();
    });

    test("a link opens in a new tab, without the referrer, once the user agrees", async () => {
        const server = new ScriptedServer();
        const {seen, ask, requests} = appOn(server);
        assert.deepEqual(await requests.openLink({url: "https://example.com/a"}), {});
        assert.deepEqual(ask.asked, [{link: "https://example.com/a"}]);
        assert.deepEqual(seen.tabs, [{url: "https://example.com/a", referrer: false}]);
        requests.dispose();
    });

    test("a link the user refuses, or that is no web address, opens nothing", async () => {
        const server = new ScriptedServer();
        const {seen, requests} = appOn(server, COUNTER, new ScriptedAsk({agree: false}));
        assert.deepEqual(await requests.openLink({url: "https://example.com/a"}), {isError: true});
        await assert.rejects(requests.openLink({url: "javascript:alert(1)"}), (error) => {
            assert.ok(error instanceof AppRequestError);
            assert.equal(error.message, "refused link_refused");
            return true;
        });
        assert.deepEqual(seen.tabs, []);
        requests.dispose();
    });

    test("the app's routes name its conversation and call; a refusal is the request's error", async () => {
        const server = new ScriptedServer();
        const {requests} = appOn(server);
        server.routes["/ai_mcp/app/read_resource"] = {error: {code: "NOT_FOUND", message: "gone"}};
        await assert.rejects(requests.readResource({uri: "ui://crm/x"}), /gone/);
        assert.deepEqual(server.calls("/ai_mcp/app/read_resource"), [
            {conversation_id: 7, call_id: "a1", uri: "ui://crm/x"},
        ]);
        requests.dispose();
    });

    test("a frame gone hears no more of the tools answered elsewhere", async () => {
        const server = new ScriptedServer();
        needsApproval(server, "add");
        const {store, ask, requests} = appOn(server);
        requests.callTool({name: "add", arguments: {}});
        await until(() => ask.open.has("add"));
        requests.dispose();
        store.services.envBus.trigger(TOOL_ANSWERED, {...COUNTER, tool: "add", app: null});
        await settle();
        assert.equal(server.calls("/ai_mcp/app/call_tool").length, 1); // not sent again
    });
});
