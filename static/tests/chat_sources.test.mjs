import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {PromptSource} from "../src/composer/logic/prompt_source.js";
import {ResourceSource} from "../src/composer/logic/resource_source.js";
import {ScriptedServer, storeOn} from "./chat_store_harness.mjs";
import {sequence} from "./chat_state_events.mjs";

describe("PromptSource and ResourceSource on the store", () => {
    test("prompts and resources are asked for the conversation the store shows", async () => {
        const server = new ScriptedServer();
        const {store} = storeOn(server);
        store.state.cloudServiceId = 5;
        server.routes["/ai_mcp/prompts"] = {prompts: [{server_id: 1, name: "summary"}]};
        const prompts = new PromptSource(store);
        await prompts.search();
        assert.deepEqual(prompts.state, {
            prompts: [{server_id: 1, name: "summary"}],
            loading: false,
        });
        assert.deepEqual(server.calls("/ai_mcp/prompts"), [{assistant_id: 3, cloud_service_id: 5}]);
        store.dispatch(sequence().start());
        await new ResourceSource(store).openLink("c1", "notes://today");
        assert.deepEqual(server.calls("/ai_mcp/resources/read"), [
            {conversation_id: 7, call_id: "c1", uri: "notes://today"},
        ]);
    });
});
