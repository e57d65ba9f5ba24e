import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {userMessage} from "../src/chat/logic/chat_state.js";
import {formatCost, usageLine, UsageTotals} from "../src/chat/logic/usage_totals.js";
import {ScriptedServer, storeOn} from "./chat_store_harness.mjs";
import {sequence} from "./chat_state_events.mjs";

const USD = {code: "USD", symbol: "$", position: "before", digits: 2};
const words = {tokens: (count) => `${count} tokens`};

describe("usageLine", () => {
    test("tokens and their cost, in the user's locale", () => {
        const totals = {tokens: 1234, costs: [{amount: 0.0212, currency: USD}]};
        assert.equal(usageLine(totals, "en-US", words), "1,234 tokens · $0.02");
        assert.equal(usageLine(totals, "de-DE", words), "1.234 tokens · 0,02\u00a0$");
    });

    test("no cost is shown when the models have no prices, nothing when nothing was used", () => {
        assert.equal(usageLine({tokens: 120000, costs: []}, "en-US", words), "120,000 tokens");
        assert.equal(usageLine({tokens: 0, costs: []}, "en-US", words), "");
        assert.equal(usageLine(null, "en-US", words), "");
    });

    test("a cost below a cent keeps two significant digits instead of showing $0.00", () => {
        assert.equal(formatCost({amount: 0.0032, currency: USD}, "en-US"), "$0.0032");
    });

    test("a currency Intl does not know shows its own symbol where the currency puts it", () => {
        const credits = {code: "XX1", symbol: "cr", position: "after", digits: 2};
        assert.equal(formatCost({amount: 1.5, currency: credits}, "en-US"), "1.50 cr");
    });

    test("costs in two currencies are both shown", () => {
        const EUR = {code: "EUR", symbol: "€", position: "after", digits: 2};
        const totals = {
            tokens: 10,
            costs: [
                {amount: 1.4, currency: USD},
                {amount: 2, currency: EUR},
            ],
        };
        assert.equal(usageLine(totals, "en-US", words), "10 tokens · $1.40 · €2.00");
    });
});

describe("UsageTotals", () => {
    function month(tokens) {
        return {tokens, costs: [{amount: tokens / 1e6, currency: USD}]};
    }

    test("read again when a conversation is opened and when its turn ends", async () => {
        const server = new ScriptedServer();
        let used = 100;
        server.routes["/ai_mcp/chat/usage"] = (params) => ({
            month: month(used),
            conversation: params.conversation_id ? month(used - 50) : null,
        });
        const {store} = storeOn(server);
        const totals = new UsageTotals(store);
        await totals.refresh();
        assert.deepEqual(server.calls("/ai_mcp/chat/usage"), [{}]);
        assert.equal(totals.state.month.tokens, 100);
        assert.equal(totals.state.conversation, null);

        const e = sequence();
        store.update(userMessage, "hello");
        store.dispatch(e.start()); // the conversation is known: its totals are read
        store.dispatch(e.round(1));
        store.dispatch(e.text("hi"));
        used = 1300;
        store.dispatch(e.done(1));
        await new Promise((resolve) => setImmediate(resolve));
        const asked = server.calls("/ai_mcp/chat/usage");
        assert.deepEqual(asked.slice(1), [{conversation_id: 7}, {conversation_id: 7}]);
        assert.equal(totals.state.month.tokens, 1300);
        assert.equal(totals.state.conversation.tokens, 1250);
        totals.dispose();
    });

    test("an older answer arriving last does not replace the newer one", async () => {
        const server = new ScriptedServer();
        const answers = [];
        server.rpc = (route, params) =>
            new Promise((resolve) => answers.push(() => resolve({month: month(params.n)})));
        const {store} = storeOn(server);
        store.services.rpc = (route, params) => server.rpc(route, {n: answers.length + 1});
        const totals = new UsageTotals(store);
        const first = totals.refresh();
        const second = totals.refresh();
        answers[1]();
        answers[0]();
        await Promise.all([first, second]);
        assert.equal(totals.state.month.tokens, 2);
    });

    test("a failed read keeps what was shown", async () => {
        const server = new ScriptedServer();
        server.routes["/ai_mcp/chat/usage"] = {month: month(5), conversation: null};
        const {store} = storeOn(server);
        const totals = new UsageTotals(store);
        await totals.refresh();
        server.routes["/ai_mcp/chat/usage"] = new Error("offline");
        await totals.refresh();
        assert.equal(totals.state.month.tokens, 5);
    });
});
