import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {
    ApprovalGate,
    approvedParam,
    argumentsKey,
    modelAsks,
    pendingTools,
    RETRY,
} from "../src/common/approval_gate.js";

/** A question the test answers when it wants: {ask, asked, answer(choice)}. */
function question() {
    const asked = [];
    let answer = null;
    const ask = () => {
        asked.push(true);
        return new Promise((resolve) => {
            answer = resolve;
        });
    };
    return {ask, asked, answer: (choice) => answer(choice)};
}

describe("an app's calls that need approval", () => {
    test("concurrent calls of one tool wait for one question and all take its answer", async () => {
        const gate = new ApprovalGate();
        const user = question();
        const tickets = [gate.ticket(), gate.ticket(), gate.ticket()];
        const waiting = tickets.map((ticket) => gate.decide("poll-system-stats", ticket, user.ask));
        await Promise.resolve();
        assert.equal(user.asked.length, 1, "one dialog for three polls");
        user.answer("app");
        assert.deepEqual(await Promise.all(waiting), ["app", "app", "app"]);
    });

    test("a call sent before the answer, whose refusal comes after it, takes the answer without asking", async () => {
        const gate = new ApprovalGate();
        const user = question();
        const first = gate.ticket();
        const inFlight = gate.ticket(); // sent while the dialog is open; its answer is still on the way
        const asked = gate.decide("poll", first, user.ask);
        await Promise.resolve();
        user.answer("conversation");
        assert.equal(await asked, "conversation");
        const never = () => assert.fail("asked again");
        assert.equal(await gate.decide("poll", inFlight, never), "conversation");
        assert.equal(gate.answered("poll", inFlight), "conversation");
    });

    test("a call sent after the answer that still needs approval asks again", async () => {
        const gate = new ApprovalGate();
        const user = question();
        const asked = gate.decide("poll", gate.ticket(), user.ask);
        await Promise.resolve();
        user.answer("once");
        assert.equal(await asked, "once");
        const later = gate.ticket(); // allowed once only, or a remembered approval was revoked
        assert.equal(gate.answered("poll", later), null);
        const again = question();
        const next = gate.decide("poll", later, again.ask);
        await Promise.resolve();
        assert.equal(again.asked.length, 1);
        again.answer("deny");
        assert.equal(await next, "deny");
    });

    test("Allow once covers the identical calls pending at the answer, not other arguments", async () => {
        // the cohort heatmap fetches its data twice at once: one answer for both, none for another
        const gate = new ApprovalGate();
        const user = question();
        const data = argumentsKey({metric: "retention", periodType: "monthly"});
        const same = argumentsKey({periodType: "monthly", metric: "retention"});
        const other = argumentsKey({metric: "revenue", periodType: "monthly"});
        const tickets = [gate.ticket(), gate.ticket(), gate.ticket()];
        const first = gate.decide("get-cohort-data", tickets[0], user.ask, data);
        const twin = gate.decide("get-cohort-data", tickets[1], user.ask, same);
        const revenue = gate.decide("get-cohort-data", tickets[2], user.ask, other);
        await Promise.resolve();
        assert.equal(user.asked.length, 1);
        user.answer("once");
        assert.deepEqual(await Promise.all([first, twin]), ["once", "once"]);
        await new Promise((resolve) => setTimeout(resolve));
        assert.equal(user.asked.length, 2, "the call with other arguments is asked about");
        user.answer("deny");
        assert.equal(await revenue, "deny");
    });

    test("a call pending at the answer takes it, also when a later call asks meanwhile", async () => {
        const gate = new ApprovalGate();
        const user = question();
        const key = argumentsKey({metric: "retention"});
        const asked = gate.decide("get-cohort-data", gate.ticket(), user.ask, key);
        const inFlight = gate.ticket(); // its refusal comes after the answer
        await Promise.resolve();
        user.answer("once");
        assert.equal(await asked, "once");
        const later = question();
        gate.decide("get-cohort-data", gate.ticket(), later.ask, key);
        await Promise.resolve();
        assert.equal(later.asked.length, 1, "a call sent after the answer asks again");
        const pending = gate.decide("get-cohort-data", inFlight, later.ask, key);
        const taken = await Promise.race([
            pending,
            new Promise((r) => setTimeout(() => r("waits"))),
        ]);
        assert.equal(taken, "once");
    });

    test("each tool has its own question", async () => {
        const gate = new ApprovalGate();
        const stats = question();
        const data = question();
        const a = gate.decide("stats", gate.ticket(), stats.ask);
        const b = gate.decide("get-cohort-data", gate.ticket(), data.ask);
        await Promise.resolve();
        assert.deepEqual([stats.asked.length, data.asked.length], [1, 1]);
        stats.answer("deny");
        data.answer("once");
        assert.deepEqual(await Promise.all([a, b]), ["deny", "once"]);
        assert.equal(gate.answered("stats", 1), "deny");
    });

    test("a dialog closed without a choice, or a failed one, denies and asks again next time", async () => {
        const gate = new ApprovalGate();
        assert.equal(await gate.decide("poll", gate.ticket(), () => undefined), "deny");
        await assert.rejects(
            gate.decide("poll", gate.ticket(), () => Promise.reject(new Error("gone"))),
            /gone/
        );
        const user = question();
        const next = gate.decide("poll", gate.ticket(), user.ask);
        await Promise.resolve();
        assert.equal(user.asked.length, 1, "the failed question is not left open");
        user.answer("once");
        assert.equal(await next, "once");
    });

    test("the choice becomes the approved parameter of the call sent again", () => {
        assert.deepEqual(
            ["once", "app", "conversation", "deny", "forever", undefined].map(approvedParam),
            ["once", "app", "conversation", false, false, false]
        );
    });

    test("a question the user answered elsewhere is released: its calls are sent again", async () => {
        const gate = new ApprovalGate();
        const user = question();
        const waiting = [gate.ticket(), gate.ticket()].map((ticket) =>
            gate.decide("get-cohort-data", ticket, user.ask)
        );
        await Promise.resolve();
        assert.equal(gate.release("poll"), false, "no question about another tool");
        assert.equal(gate.release("get-cohort-data"), true);
        assert.deepEqual(await Promise.all(waiting), [RETRY, RETRY]);
        user.answer("deny"); // the dialog closed by the release answers nothing any more
        assert.equal(
            gate.answered("get-cohort-data", 1),
            null,
            "a release is no answer to remember"
        );
        const again = question();
        const next = gate.decide("get-cohort-data", gate.ticket(), again.ask);
        await Promise.resolve();
        assert.equal(again.asked.length, 1, "still needing approval after the retry, it asks");
        again.answer("once");
        assert.equal(await next, "once");
    });
});

describe("an app's call of a tool the model's call of waits for", () => {
    const calls = [
        {id: "a", server: "Cohort", tool: "get-cohort-data"},
        {id: "b", server: "Cohort", tool: "get-cohort-data"},
        {id: "c", server: "Monitor", tool: "get-system-info"},
    ];

    test("waits for the model's question while the turn waits for it", () => {
        const waiting = {status: "awaiting_approval", pendingApproval: calls};
        assert.equal(modelAsks(waiting, "Cohort", "get-cohort-data"), true);
        assert.equal(modelAsks(waiting, "Other server", "get-cohort-data"), false);
        assert.equal(modelAsks(waiting, "Cohort", "poll"), false);
        assert.equal(
            modelAsks(
                {status: "running_tools", pendingApproval: null},
                "Cohort",
                "get-cohort-data"
            ),
            false
        );
        assert.equal(modelAsks(null, "Cohort", "get-cohort-data"), false);
    });

    test("is released, with every app call of the answered tools, once the answer is sent", () => {
        assert.deepEqual(pendingTools(calls), [
            {server: "Cohort", tool: "get-cohort-data"},
            {server: "Monitor", tool: "get-system-info"},
        ]);
        assert.deepEqual(pendingTools(null), []);
    });
});
