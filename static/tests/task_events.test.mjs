import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {ChatTurns} from "../src/chat/logic/chat_turns.js";
import {TASK_EVENTS, TaskEvents} from "../src/chat/logic/task_events.js";
import {eventStream, ScriptedServer, settle, storeOn, until} from "./chat_store_harness.mjs";
import {sequence} from "./chat_state_events.mjs";

/** A turn of conversation 7 whose call c1 ended "still running": its task goes on on its server. */
async function leftRunning() {
    const server = new ScriptedServer();
    const {store} = storeOn(server);
    const turns = new ChatTurns(store);
    const e = sequence();
    server.streamed.push(
        eventStream([
            e.start(),
            e.call("c1", "report"),
            e.result("c1"),
            e.text("Still running."),
            e.done(1),
        ])
    );
    await turns.send("compute the report");
    const block = () => store.chat.messages.at(-1).parts.find((part) => part.id === "c1");
    return {server, store, e, block, events: new TaskEvents(store)};
}

describe("TaskEvents on the store", () => {
    test("a task's question, then its result, reach the open conversation when the bus says so", async () => {
        const {server, store, e, block} = await leftRunning();
        const last = store.chat.lastEventId;
        server.streamed.push(eventStream([e.ask("c1", "task-3-k", {task: true})]));
        store.services.busService.notify(TASK_EVENTS, {conversation_id: 7});
        await until(() => block().question);
        assert.equal(server.fetched.at(-1).url, `/ai_mcp/chat/7/events?after=${last}`);
        assert.equal(block().question.message, "Which one?");
        server.streamed.push(
            eventStream([
                {
                    type: "task_result",
                    seq: store.chat.lastEventId + 1,
                    id: "c1",
                    tool: "report",
                    status: "completed",
                    ok: true,
                    content: [{type: "text", text: "The report"}],
                    model_text: "The report",
                },
            ])
        );
        store.services.busService.notify(TASK_EVENTS, {conversation_id: 7});
        await until(() => block().result.content[0].text === "The report");
        assert.equal(block().question, null);
    });

    test("another conversation's events are read when it is opened, not now", async () => {
        const {server, store} = await leftRunning();
        const fetched = server.fetched.length;
        store.services.busService.notify(TASK_EVENTS, {conversation_id: 8});
        await settle();
        assert.equal(server.fetched.length, fetched);
    });
});
