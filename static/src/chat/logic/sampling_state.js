/** @odoo-module */

/**
 * A running call's server asks the assistant's model for a completion (sampling). The call's block
 * carries the request while it waits for the user (`sampling`: { sampling, server, messages
 * [{ role, text }], systemPrompt, maxTokens }), until its sampling_done or the call's result; and
 * every request that was answered, declined or refused (`sampled`: [{ sampling, server, action,
 * answer, model, note }]), so that the user sees what went back to the server.
 */

/** `part` (a tool block) with the request of sampling_required `event` open, if it is the event's call. */
export function openSampling(part, event, running) {
    if (part.id !== event.id || !running) {
        return part;
    }
    const sampling = {
        sampling: event.sampling,
        server: event.server,
        messages: event.messages.map((message) => ({role: message.role, text: message.text})),
        systemPrompt: event.system_prompt ?? null,
        maxTokens: event.max_tokens,
    };
    return {...part, sampling};
}

/** `part` with the request of sampling_done `event` closed, and its outcome kept. */
export function closeSampling(part, event) {
    if (part.id !== event.id || part.sampling?.sampling !== event.sampling) {
        return part;
    }
    const outcome = {
        sampling: event.sampling,
        server: part.sampling.server,
        action: event.action,
        answer: event.answer ?? null,
        model: event.model ?? null,
        note: event.note ?? null,
    };
    return {...part, sampling: null, sampled: [...(part.sampled || []), outcome]};
}

/**
 * What the user approves: the messages and output cap as she edited them, each message's text
 * as typed; null (with `problem`) when they do not make a request.
 */
export function editedRequest(messages, maxTokens) {
    const cap = Number(maxTokens);
    if (!Number.isInteger(cap) || cap < 1) {
        return {request: null, problem: "max_tokens"};
    }
    if (!messages.length || messages.some((message) => !message.text.trim())) {
        return {request: null, problem: "empty"};
    }
    return {
        request: {
            messages: messages.map((message) => ({role: message.role, text: message.text})),
            max_tokens: cap,
        },
        problem: null,
    };
}
