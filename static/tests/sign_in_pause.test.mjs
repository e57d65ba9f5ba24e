import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {ChatStatus, ErrorCode} from "../src/common/chat_status.js";
import {ChatTurns} from "../src/chat/logic/chat_turns.js";
import {SIGNED_IN, SignInPause} from "../src/chat/logic/sign_in_pause.js";
import {eventStream, refusal, ScriptedServer, storeOn, until} from "./chat_store_harness.mjs";
import {sequence} from "./chat_state_events.mjs";

const text = (chat) =>
    chat.messages
        .at(-1)
        .parts.filter((part) => part.kind === "text")
        .map((part) => part.text)
        .join("");
function signInServer(id, name) {
    return {
        server_id: id,
        server: name,
        url: `/ai_mcp/oauth/start?server_id=${id}&conversation_id=7`,
        step_up: false,
        scope: null,
        message: `Sign in to ${name} to use its tools.`,
    };
}

/** A chat whose turn waits for sign-ins to Notes (7) and Wiki (9). */
async function pausedForSignIn() {
    const server = new ScriptedServer();
    const {store, seen} = storeOn(server);
    const turns = new ChatTurns(store);
    const e = sequence();
    server.streamed.push(
        eventStream([
            e.start(),
            e.signIn([signInServer(7, "Notes"), signInServer(9, "Wiki")], "call_note", "call_wiki"),
        ])
    );
    await turns.send("read my notes");
    return {server, store, seen, turns, e, signIn: new SignInPause(store, turns)};
}

describe("SignInPause on the store", () => {
    test("a card opens its sign-in page; the turn resumes once every server is answered", async () => {
        const {server, store, seen, e, signIn} = await pausedForSignIn();
        assert.deepEqual(
            signIn.servers(store.chat).map((card) => card.server),
            ["Notes", "Wiki"]
        );
        signIn.open(7);
        assert.deepEqual(seen.tabs, ["/ai_mcp/oauth/start?server_id=7&conversation_id=7"]);
        assert.equal(signIn.servers(store.chat)[0].opened, true);
        // the OAuth callback's notification, as every tab of the user hears it
        store.services.busService.notify(SIGNED_IN, {server_id: 7});
        assert.equal(server.fetched.length, 1, "Wiki is not answered yet: nothing is resumed");
        server.streamed.push(eventStream([e.start(), e.text("Your notes say hi."), e.done(1)]));
        signIn.decline(9);
        await until(() => store.chat.status === ChatStatus.IDLE);
        assert.equal(server.fetched[1].url, "/ai_mcp/chat/resume");
        assert.deepEqual(server.fetched[1].body, {conversation_id: 7, sign_in: {declined: [9]}});
        assert.equal(text(store.chat), "Your notes say hi.");
        assert.deepEqual(signIn.servers(store.chat), []);
    });

    test("a sign-in to a server this turn does not wait for changes nothing", async () => {
        const {server, store, signIn} = await pausedForSignIn();
        const before = store.chat;
        store.services.busService.notify(SIGNED_IN, {server_id: 12});
        signIn.open(12);
        assert.equal(store.chat, before);
        assert.equal(server.fetched.length, 1);
    });

    test("when another tab resumed first, this one shows that tab's answer, not an error", async () => {
        const {server, store, e, signIn} = await pausedForSignIn();
        signIn.decline(9);
        server.streamed.push(refusal(409, {code: ErrorCode.NOT_WAITING, message: "Not waiting."}));
        server.routes["/ai_mcp/conversation/7/history"] = {
            conversation: {id: 7, assistant_id: 3, state: "idle"},
            messages: [{role: "user", text: "read my notes", seq: 0}],
            events: [e.start(), e.text("Answered in the other tab."), e.done(1)],
        };
        store.services.busService.notify(SIGNED_IN, {server_id: 7});
        await until(() => store.chat.status === ChatStatus.IDLE);
        assert.equal(store.chat.error, null);
        assert.equal(text(store.chat), "Answered in the other tab.");
    });

    test("once the chat is closed, a sign-in elsewhere resumes nothing", async () => {
        const {server, store, signIn} = await pausedForSignIn();
        signIn.decline(9);
        signIn.dispose();
        store.services.busService.notify(SIGNED_IN, {server_id: 7});
        assert.equal(server.fetched.length, 1);
        assert.equal(store.chat.status, ChatStatus.AWAITING_AUTH);
    });
});
