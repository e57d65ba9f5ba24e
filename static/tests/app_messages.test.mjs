import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {AppMessages} from "../src/apps/logic/app_messages.js";
import {ChatStatus} from "../src/common/chat_status.js";
import {ChatTurns} from "../src/chat/logic/chat_turns.js";
import {eventStream, ScriptedServer, storeOn, until} from "./chat_store_harness.mjs";
import {sequence} from "./chat_state_events.mjs";

describe("AppMessages on the store", () => {
    test("an app's message goes in the user's name, naming the app's call", async () => {
        const server = new ScriptedServer();
        const {store} = storeOn(server);
        const turns = new ChatTurns(store);
        const e = sequence();
        server.streamed.push(eventStream([e.start(), e.text("Added."), e.done(1)]));
        const refused = new AppMessages(store, turns).send({
            callId: "c9",
            title: "Counter",
            text: "add one",
        });
        assert.equal(refused, null);
        await until(() => store.chat.status === ChatStatus.IDLE);
        assert.equal(server.fetched[0].body.app_call_id, "c9");
        assert.deepEqual(store.chat.messages[0], {
            role: "user",
            text: "add one",
            app: {callId: "c9", title: "Counter"},
        });
    });

    test("while the answer streams an app's message is refused, and the app and user are told", () => {
        const server = new ScriptedServer();
        const {store, seen} = storeOn(server);
        store.state.busy = true;
        const refused = new AppMessages(store, new ChatTurns(store)).send({
            callId: "c9",
            title: "Counter",
            text: "add one",
        });
        assert.equal(refused, "words.appBusy Counter");
        assert.deepEqual(seen.notified, [{message: "words.appBusy Counter", type: "warning"}]);
        assert.deepEqual(server.fetched, []);
        assert.deepEqual(store.chat.messages, []);
    });
});
