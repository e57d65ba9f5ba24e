/** The events and helpers the chat state tests share: a reducer fed a stream, state by state. */

import {reduce, userMessage, initialChatState} from "../src/chat/logic/chat_state.js";

// Events as services/events.py's data() sends them, numbered as the conversation's sequence.
export function sequence(first = 1) {
    let seq = first - 1;
    const next = (type, payload = {}) => ({type, ...payload, seq: ++seq});
    return {...turnEvents(next), ...toolEvents(next), ...pauseEvents(next)};
}

// The turn's frame and the model's own output.
function turnEvents(next) {
    return {
        start: (maxRounds = 5) =>
            next("start", {conversation_id: 7, assistant: "Helpdesk", max_rounds: maxRounds}),
        round: (n, max = 5) => next("round", {n, max}),
        text: (delta) => next("text", {delta}),
        thinking: (delta, replayAs = null) => next("thinking", {delta, replay_as: replayAs}),
        refused: (param) =>
            next("model_refused_param", {model: "o3", param, message: `${param} refused`}),
        warning: (code, message) => next("warning", {code, message}),
        error: (code, message) => next("error", {code, message}),
        done: (rounds) =>
            next("done", {message_id: 42, usage: {input_tokens: 100, output_tokens: 20}, rounds}),
    };
}

// A tool's life: found by search, called, its input streamed, its progress and logs, its result.
function toolEvents(next) {
    return {
        search: (id, query, found) =>
            next("tool_search", {
                id,
                name: "search_tools",
                query,
                round: 1,
                found: found.map((tool) => ({
                    name: tool,
                    tool,
                    title: tool.replace("_", " "),
                    server: "Odoo",
                    summary: `${tool} in one line`,
                })),
                model_text: `${found.length} tools found`,
                kept: [],
            }),
        call: (id, tool, extra = {}) =>
            next("tool_call", {
                id,
                name: `crm__${tool}`,
                tool,
                title: tool.replace("_", " "),
                server: "CRM",
                arguments: {query: id},
                round: 1,
                requires_approval: false,
                ...extra,
            }),
        input: (id, args, extra = {}) =>
            next("tool_input", {
                id,
                name: "charts__bar",
                tool: "bar",
                title: "Bar chart",
                server: "Charts",
                app: "ui://charts/bar.html",
                arguments: args,
                ...extra,
            }),
        progress: (id, progress, total = null, message = null, ms = 100) =>
            next("tool_progress", {id, progress, total, message, elapsed_ms: ms}),
        log: (id, level, message) => next("tool_log", {id, level, logger: null, message}),
        result: (
            id,
            {
                ok = true,
                code = null,
                ms = 10,
                content = [{type: "text", text: `${id} ok`}],
                task = null,
            } = {}
        ) =>
            next("tool_result", {
                id,
                ok,
                content: ok ? content : [],
                model_text: "...",
                error_code: code,
                error_message: code && `${code} happened`,
                duration_ms: ms,
                ...(task ? {task} : {}),
            }),
    };
}

// What pauses a turn: an approval, a sign-in, the "continue?" after the rounds, a server's question.
function pauseEvents(next) {
    return {
        approval: (...ids) =>
            next("approval_required", {
                calls: ids.map((id) => ({
                    id,
                    tool: id,
                    title: id,
                    server: "CRM",
                    arguments: {query: id},
                })),
            }),
        signIn: (servers, ...ids) =>
            next("auth_required", {
                servers,
                calls: ids.map((id) => ({
                    id,
                    tool: id,
                    title: id,
                    server: "Notes",
                    arguments: {query: id},
                })),
            }),
        confirm: (used, max = 5) => next("confirm_continue", {rounds_used: used, max_rounds: max}),
        ask: (id, elicitation, extra = {}) =>
            next("elicitation_required", {
                id,
                elicitation,
                server: "CRM",
                mode: "form",
                message: "Which one?",
                requested_schema: {type: "object", properties: {pick: {type: "string"}}},
                url: null,
                host: null,
                ...extra,
            }),
        answered: (id, elicitation, action = "accept", extra = {}) =>
            next("elicitation_done", {id, elicitation, action, ...extra}),
    };
}

export function deepFreeze(value) {
    if (value && typeof value === "object" && !Object.isFrozen(value)) {
        Object.freeze(value);
        Object.values(value).forEach(deepFreeze);
    }
    return value;
}

// Every state is frozen before it is reduced: a reducer that mutates its input throws.
export function play(state, events) {
    return events.reduce((current, event) => reduce(deepFreeze(current), event), state);
}

export function statuses(state, events) {
    const seen = [];
    events.reduce((current, event) => {
        const next = reduce(deepFreeze(current), event);
        seen.push(next.status);
        return next;
    }, state);
    return seen;
}

export const lastAnswer = (state) => state.messages.at(-1).parts;
export const tools = (state) => lastAnswer(state).filter((part) => part.kind === "tool");
export const asked = (text) => userMessage(initialChatState(), text);
