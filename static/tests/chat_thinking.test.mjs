/** Reasoning a model shows: a "Thinking" part of the answer, in stream order, kept on reload. */

import assert from "node:assert/strict";
import {test} from "node:test";

import {fromHistory} from "../src/chat/logic/chat_state.js";
import {asked, lastAnswer, play, sequence} from "./chat_state_events.mjs";

function turn() {
    const e = sequence();
    return [
        e.start(),
        e.round(1),
        e.thinking("The user wants "),
        e.thinking("the weather."),
        e.call("call_a", "weather"),
        e.result("call_a"),
        e.round(2),
        e.refused("temperature"),
        e.thinking("It is sunny."),
        e.text("Sunny."),
        e.done(2),
    ];
}

test("each stretch of reasoning is one thinking part, before what it led to", () => {
    const state = play(asked("Weather?"), turn());
    const parts = lastAnswer(state);
    assert.deepEqual(
        parts.map((part) => [part.kind, part.text ?? part.tool]),
        [
            ["thinking", "The user wants the weather."],
            ["tool", "weather"],
            ["thinking", "It is sunny."],
            ["text", "Sunny."],
        ]
    );
    assert.equal(state.error, null); // a refused parameter changes nothing shown
});

test("a reloaded conversation shows the reasoning it streamed", () => {
    const streamed = lastAnswer(play(asked("Weather?"), turn()));
    const reloaded = fromHistory([{role: "user", text: "Weather?", seq: 0}], turn());
    assert.deepEqual(
        lastAnswer(reloaded).filter((part) => part.kind === "thinking"),
        streamed.filter((part) => part.kind === "thinking")
    );
});
