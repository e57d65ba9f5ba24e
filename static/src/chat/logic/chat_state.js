/** @odoo-module */
import {closeSampling, openSampling} from "./sampling_state.js";
import {CallStatus, ChatStatus, ErrorCode} from "../../common/chat_status.js";
import {FAILED_CALL_STATUS} from "./turn_protocol.js";
import {searchBlock} from "./tool_search_block.js";
/**
 * The chat widget's view state, built from the turn's events (docs/events.md).
 *
 * An event is the JSON payload of services/events.py (`data()`: snake_case keys, `type` included)
 * plus `seq`, the event's sequence number in the conversation (the SSE `id:` line, from 1 up).
 * It is not called `id` because tool_call and tool_result payloads carry an `id` of their own: the
 * call's. `eventFromSse` builds one from what SseParser yields; persisted events must have the same
 * shape so that `fromHistory` rebuilds exactly what the stream showed.
 *
 * Status, for the widget's indicator ("Round N/maxRounds" whenever round > 0 and the turn streams):
 *   idle                   nothing running; the composer is open
 *   thinking               the model is answering: after sending, `start`, `round`, and once every
 *                          tool call of the round has its result (the next model call is under way)
 *   running_tools          at least one tool block of the current turn is still running
 *   awaiting_approval      `pendingApproval` holds the calls the user must allow or deny; calls of the
 *                          same round that need no approval wait too and keep status "running"
 *   awaiting_confirmation  `confirm` holds { roundsUsed, maxRounds }: go on or answer now
 *   awaiting_auth          `pendingSignIn` holds { servers, calls }: the user signs in to each server
 *                          (in another tab) or goes on without it; its calls have status
 *                          "pending_sign_in" and run once the turn resumes
 *   error                  `error` holds { code, message }; the turn ended
 *
 * While a call runs, its block carries the server's latest `progress` ({ progress, total, message,
 * elapsedMs }, coalesced by the server side) and its `logs` ([{ level, logger, message }]); the user
 * may ask to stop it (`cancelRequested`), after which it shows as stopping until its result, a
 * CANCELLED error, arrives with status "cancelled". A server may ask the user something while its call
 * runs: the block's `question` ({ elicitation, mode, message, server, requestedSchema, url, host })
 * is open until its elicitation_done or the call's result; a task the call left running may ask
 * after its turn (`question.task`), on its block in whichever answer. A question left unanswered past its
 * limit is cancelled; the block's `note` then says so. A server may also ask the assistant's model
 * for a completion, which the user approves first: the block's `sampling` and `sampled`
 * (sampling_state.js).
 *
 * A turn's assistant message collects its text and tool blocks in stream order and is continued,
 * not replaced, when the turn resumes after an approval, a sign-in or a confirmation. Tool blocks
 * carry `key`, unique in the conversation (call ids are only unique within a turn), for t-key and
 * toggleTool.
 *
 * A tool whose server renders it as an app (`app`, its ui:// URI) may have its block before its
 * tool_call: `tool_input` events carry the arguments the model has streamed so far, and the block
 * shows as "preparing" until the tool_call makes it run with the complete arguments. A user
 * message an app sent carries `app` ({ callId, title }): the call whose app sent it.
 */

const STREAMING = new Set([ChatStatus.THINKING, ChatStatus.RUNNING_TOOLS]);

export function initialChatState() {
    return {
        conversationId: null,
        assistant: null,
        messages: [],
        status: ChatStatus.IDLE,
        round: 0,
        maxRounds: 5,
        pendingApproval: null,
        pendingSignIn: null,
        confirm: null,
        error: null,
        warnings: [],
        lastEventId: 0,
        usage: null,
    };
}

/** The event SseParser yields ({ event, data, id }) as `reduce` takes it. */
export function eventFromSse(message) {
    return {type: message.event, ...message.data, seq: message.id};
}

/** `app`: { callId, title } when an app sent the message in the user's name. */
export function userMessage(state, text, app = null) {
    const message = app ? {role: "user", text, app} : {role: "user", text};
    return {
        ...state,
        messages: [...state.messages, message],
        status: ChatStatus.THINKING,
        round: 0,
        pendingApproval: null,
        pendingSignIn: null,
        confirm: null,
        error: null,
        warnings: [],
        usage: null,
    };
}

export function reduce(state, event) {
    const seq = typeof event.seq === "number" ? event.seq : null;
    if (seq !== null && seq <= state.lastEventId) {
        return state; // already applied: a replay after a reconnect overlaps what was streamed
    }
    const handler = Object.hasOwn(HANDLERS, event.type) ? HANDLERS[event.type] : null;
    // An unknown type comes from a newer server: skip it, but keep its place in the sequence.
    const next = handler ? handler(state, event) : state;
    return seq === null ? next : {...next, lastEventId: seq};
}

/**
 * Rebuild the view of a stored conversation. `messages`: its user messages as { role: "user", text,
 * seq, app? } (app: { call_id, title } when an app sent it), where `seq` places the message before every event whose seq is greater (the message's own
 * sequence number, or that of the last event before it); messages of other roles are ignored, the
 * events carry everything else. `events`: the persisted events in order.
 */
export function fromHistory(messages, events) {
    const users = messages.filter((message) => message.role === "user");
    let state = initialChatState();
    let next = 0;
    for (const event of events) {
        for (; next < users.length && users[next].seq < event.seq; next++) {
            state = storedUserMessage(state, users[next]);
        }
        state = reduce(state, event);
    }
    for (; next < users.length; next++) {
        state = storedUserMessage(state, users[next]);
    }
    return state;
}

function storedUserMessage(state, message) {
    const app = message.app ? {callId: message.app.call_id, title: message.app.title} : null;
    return userMessage(state, message.text, app);
}

/** The user asked to stop one running call (the server answers with its CANCELLED result), or the
 * task a call left running, in whichever answer (its task_result then says it was cancelled). */
export function cancelRequested(state, key) {
    const mark = (part) =>
        part.kind === "tool" &&
        part.key === key &&
        (part.status === CallStatus.RUNNING || part.taskRunning)
            ? {...part, cancelling: true}
            : part;
    const messages = state.messages.map((message) =>
        message.role === "assistant" && message.parts.some((part) => part.key === key)
            ? {...message, parts: message.parts.map(mark)}
            : message
    );
    return {...state, messages};
}

export function toggleTool(state, key) {
    const toggle = (part) => (part.key === key ? {...part, expanded: !part.expanded} : part);
    const messages = state.messages.map((message) =>
        message.role === "assistant" && message.parts.some((part) => part.key === key)
            ? {...message, parts: message.parts.map(toggle)}
            : message
    );
    return {...state, messages};
}

/**
 * The user pressed stop: the request is aborted and the server cancels the turn, so nothing more
 * arrives for the blocks still running; they end as errors with code CANCELLED rather than spin on.
 * Outside a streaming turn there is nothing to stop.
 */
export function stopped(state) {
    if (!STREAMING.has(state.status)) {
        return state;
    }
    const messages = interruptRunning(state.messages, "stopped");
    return {...state, status: ChatStatus.IDLE, messages};
}

/**
 * The user opened the sign-in page of `serverId` (in another tab): its card waits for the sign-in.
 * Nothing changes when the turn does not wait for that server.
 */
export function signInOpened(state, serverId) {
    return updateSignIn(state, serverId, {opened: true});
}

/** `serverId` is signed in: the bus said so, or the user did (the card's fallback link). */
export function signedIn(state, serverId) {
    return updateSignIn(state, serverId, {outcome: "signed_in"});
}

/** The user goes on without `serverId`: its calls fail, saying so, when the turn resumes. */
export function signInDeclined(state, serverId) {
    return updateSignIn(state, serverId, {outcome: "declined"});
}

/**
 * The answer that resumes a turn waiting for sign-ins ({ sign_in: { declined: [server ids] } } for
 * POST /ai_mcp/chat/resume) once every server is signed in or declined; null until then.
 */
export function signInAnswer(state) {
    const servers = state.status === ChatStatus.AWAITING_AUTH ? state.pendingSignIn?.servers : null;
    if (!servers || servers.some((server) => !server.outcome)) {
        return null;
    }
    const declined = servers
        .filter((server) => server.outcome === "declined")
        .map((server) => server.serverId);
    return {sign_in: {declined}};
}

// The latest word wins: a server declined a moment ago and then signed in after all is signed in.
function updateSignIn(state, serverId, change) {
    const pending = state.status === ChatStatus.AWAITING_AUTH ? state.pendingSignIn : null;
    if (!pending?.servers.some((server) => server.serverId === serverId)) {
        return state;
    }
    const servers = pending.servers.map((server) =>
        server.serverId === serverId ? {...server, ...change} : server
    );
    return {...state, pendingSignIn: {...pending, servers}};
}

/** Tool statuses of calls that run only once the user has answered the pause. */
const WAITING_FOR_USER = new Set([CallStatus.PENDING_APPROVAL, CallStatus.PENDING_SIGN_IN]);

const HANDLERS = {
    start(state, event) {
        // A start while calls await approval or a sign-in is the resume after the user's answer: the
        // server now runs the allowed calls and answers the denied or declined ones with failed results.
        const release = (part) =>
            WAITING_FOR_USER.has(part.status) ? {...part, status: CallStatus.RUNNING} : part;
        const paused = state.pendingApproval || state.pendingSignIn;
        const messages = paused ? mapCurrentTools(state.messages, release) : state.messages;
        return {
            ...state,
            conversationId: event.conversation_id ?? state.conversationId,
            assistant: event.assistant,
            maxRounds: event.max_rounds,
            messages,
            status: busyStatus(messages),
            pendingApproval: null,
            pendingSignIn: null,
            confirm: null,
            error: null,
        };
    },

    round(state, event) {
        return {...state, round: event.n, maxRounds: event.max, status: ChatStatus.THINKING};
    },

    text(state, event) {
        if (!event.delta) {
            return state;
        }
        const messages = appendToAnswer(state.messages, (parts) => {
            const last = parts[parts.length - 1];
            return last?.kind === "text"
                ? [...parts.slice(0, -1), {kind: "text", text: last.text + event.delta}]
                : [...parts, {kind: "text", text: event.delta}];
        });
        return {...state, messages};
    },

    /** Reasoning the model shows: one collapsed "Thinking" part per stretch of it, in stream order. */
    thinking(state, event) {
        if (!event.delta) {
            return state;
        }
        const messages = appendToAnswer(state.messages, (parts) => {
            const last = parts[parts.length - 1];
            return last?.kind === "thinking"
                ? [...parts.slice(0, -1), {kind: "thinking", text: last.text + event.delta}]
                : [...parts, {kind: "thinking", text: event.delta}];
        });
        return {...state, messages};
    },

    tool_input(state, event) {
        const messages = appendToAnswer(state.messages, (parts, index) => {
            const block = parts.find((part) => part.kind === "tool" && part.id === event.id);
            if (!block) {
                return [...parts, {...toolBlock(event, index), status: CallStatus.PREPARING}];
            }
            // a tool_input that comes after the call's tool_call is stale
            const update = (part) =>
                part === block && part.status === CallStatus.PREPARING
                    ? {...part, arguments: event.arguments}
                    : part;
            return parts.map(update);
        });
        return {...state, messages};
    },

    tool_call(state, event) {
        const messages = appendToAnswer(state.messages, (parts, index) => {
            const prepared = parts.find(
                (part) =>
                    part.kind === "tool" &&
                    part.id === event.id &&
                    part.status === CallStatus.PREPARING
            );
            if (!prepared) {
                return [...parts, toolBlock(event, index)];
            }
            const started = {...toolBlock(event, index), expanded: prepared.expanded};
            return parts.map((part) => (part === prepared ? started : part));
        });
        return {...state, messages, status: ChatStatus.RUNNING_TOOLS};
    },

    tool_search(state, event) {
        const block = (parts, index) => [...parts, searchBlock(event, index)];
        return {...state, messages: appendToAnswer(state.messages, block)};
    },

    tool_progress(state, event) {
        const progress = {
            progress: event.progress,
            total: event.total ?? null,
            message: event.message ?? null,
            elapsedMs: event.elapsed_ms ?? 0,
        };
        const update = (part) =>
            part.id === event.id && part.status === CallStatus.RUNNING ? {...part, progress} : part;
        return {...state, messages: mapCurrentTools(state.messages, update)};
    },

    tool_log(state, event) {
        const line = {level: event.level, logger: event.logger ?? null, message: event.message};
        const update = (part) =>
            part.id === event.id ? {...part, logs: [...part.logs, line]} : part;
        return {...state, messages: mapCurrentTools(state.messages, update)};
    },

    elicitation_required(state, event) {
        const question = {
            elicitation: event.elicitation,
            mode: event.mode,
            message: event.message,
            server: event.server,
            requestedSchema: event.requested_schema ?? null,
            url: event.url ?? null,
            host: event.host ?? null,
            task: Boolean(event.task),
        };
        if (question.task) {
            // the task a call left running asks between turns: on its block, in whichever answer
            const ask = (part) => ({...part, question});
            return {...state, messages: mapCallBlocks(state.messages, event.id, ask)};
        }
        const update = (part) =>
            part.id === event.id && part.status === CallStatus.RUNNING ? {...part, question} : part;
        return {...state, messages: mapCurrentTools(state.messages, update)};
    },

    elicitation_done(state, event) {
        const close = (part) =>
            part.question?.elicitation === event.elicitation
                ? {...part, question: null, note: event.note ?? part.note}
                : part;
        return {...state, messages: mapCallBlocks(state.messages, event.id, close)};
    },

    sampling_required(state, event) {
        const update = (part) => openSampling(part, event, part.status === CallStatus.RUNNING);
        return {...state, messages: mapCurrentTools(state.messages, update)};
    },

    sampling_done(state, event) {
        const update = (part) => closeSampling(part, event);
        return {...state, messages: mapCurrentTools(state.messages, update)};
    },

    tool_result(state, event) {
        // a call that ended "still running" leaves its server's task running: the block can stop it
        const finish = (part) => {
            if (part.id !== event.id) {
                return part;
            }
            return event.task
                ? {...withResult(part, event), taskRunning: true}
                : withResult(part, event);
        };
        const messages = mapCurrentTools(state.messages, finish);
        return {...state, messages, status: busyStatus(messages)};
    },

    /** A server's task the call was left running as ended after its turn: its block, in whichever
     * answer it is, shows the result. */
    task_result(state, event) {
        const finish = (part) => ({
            ...withResult(part, event),
            ...(event.status === "cancelled" ? {status: CallStatus.CANCELLED} : {}),
            taskRunning: false,
        });
        return {...state, messages: mapCallBlocks(state.messages, event.id, finish)};
    },

    approval_required(state, event) {
        const waiting = new Set(event.calls.map((call) => call.id));
        const messages = mapCurrentTools(state.messages, (part) =>
            waiting.has(part.id) ? {...part, status: CallStatus.PENDING_APPROVAL} : part
        );
        return {
            ...state,
            messages,
            pendingApproval: event.calls,
            status: ChatStatus.AWAITING_APPROVAL,
        };
    },

    auth_required(state, event) {
        const waiting = new Set(event.calls.map((call) => call.id));
        const messages = mapCurrentTools(state.messages, (part) =>
            waiting.has(part.id) ? {...part, status: CallStatus.PENDING_SIGN_IN} : part
        );
        const servers = event.servers.map((server) => ({
            serverId: server.server_id,
            server: server.server,
            url: server.url,
            stepUp: server.step_up === true,
            scope: server.scope ?? null,
            message: server.message,
            opened: false,
            outcome: null,
        }));
        return {
            ...state,
            messages,
            pendingSignIn: {servers, calls: event.calls},
            status: ChatStatus.AWAITING_AUTH,
        };
    },

    confirm_continue(state, event) {
        return {
            ...state,
            confirm: {roundsUsed: event.rounds_used, maxRounds: event.max_rounds},
            status: ChatStatus.AWAITING_CONFIRMATION,
        };
    },

    warning(state, event) {
        // Each resume binds the tools again and repeats the same warnings; one banner is enough.
        if (state.warnings.some((w) => w.code === event.code && w.message === event.message)) {
            return state;
        }
        return {
            ...state,
            warnings: [...state.warnings, {code: event.code, message: event.message}],
        };
    },

    error(state, event) {
        return {
            ...state,
            messages: interruptRunning(state.messages, "error"),
            error: {code: event.code, message: event.message},
            status: ChatStatus.ERROR,
        };
    },

    done(state, event) {
        return {
            ...state,
            status: ChatStatus.IDLE,
            usage: event.usage ?? null,
            pendingApproval: null,
            pendingSignIn: null,
            confirm: null,
        };
    },
};

function toolBlock(event, messageIndex) {
    return {
        kind: "tool",
        key: `${messageIndex}:${event.id}`,
        id: event.id,
        name: event.name,
        tool: event.tool,
        title: event.title,
        server: event.server,
        arguments: event.arguments,
        round: event.round ?? null,
        icon: event.icon ?? null,
        app: event.app ?? null,
        // why it ran without asking: "conversation" when the user allowed its tool for the conversation
        approval: event.approval ?? null,
        status: CallStatus.RUNNING,
        durationMs: null,
        result: null,
        // an app is what the call shows: it is open from the start
        expanded: Boolean(event.app),
        progress: null,
        logs: [],
        cancelling: false,
        question: null,
        note: null,
    };
}

function withResult(part, event) {
    let status = CallStatus.DONE;
    if (!event.ok) {
        status = Object.hasOwn(FAILED_CALL_STATUS, event.error_code ?? "")
            ? FAILED_CALL_STATUS[event.error_code]
            : CallStatus.ERROR;
    }
    return {
        ...part,
        status,
        cancelling: false,
        question: null,
        durationMs: event.duration_ms ?? null,
        result: {
            ok: event.ok,
            content: event.content ?? [],
            errorCode: event.error_code ?? null,
            errorMessage: event.error_message ?? null,
        },
    };
}

/** Calls still running (or still being prepared by the model) when the turn ends are marked with
 * why (`interrupted`: "stopped" by the user, or ended by an "error"); the widget words it in the
 * user's language. */
function interruptRunning(messages, interrupted) {
    return mapCurrentTools(messages, (part) =>
        part.status === CallStatus.RUNNING || part.status === CallStatus.PREPARING
            ? {
                  ...part,
                  status: CallStatus.ERROR,
                  question: null,
                  result: {
                      ok: false,
                      content: [],
                      errorCode: ErrorCode.CANCELLED,
                      errorMessage: null,
                      interrupted,
                  },
              }
            : part
    );
}

/** Text and tool calls go to the current turn's answer, which starts at the first of them. */
function appendToAnswer(messages, update) {
    const last = messages[messages.length - 1];
    if (last?.role === "assistant") {
        return [
            ...messages.slice(0, -1),
            {...last, parts: update(last.parts, messages.length - 1)},
        ];
    }
    return [...messages, {role: "assistant", parts: update([], messages.length)}];
}

/** Results, approvals and interruptions concern the current turn only: older turns reuse call ids. */
function mapCurrentTools(messages, update) {
    const last = messages[messages.length - 1];
    if (last?.role !== "assistant") {
        return messages;
    }
    const parts = last.parts.map((part) => (part.kind === "tool" ? update(part) : part));
    return [...messages.slice(0, -1), {...last, parts}];
}

/** `update` applied to the tool blocks of call `id`, in whichever answer they are. */
function mapCallBlocks(messages, id, update) {
    const apply = (part) => (part.kind === "tool" && part.id === id ? update(part) : part);
    return messages.map((message) =>
        message.role === "assistant" && message.parts.some((part) => part.id === id)
            ? {...message, parts: message.parts.map(apply)}
            : message
    );
}

function busyStatus(messages) {
    const last = messages[messages.length - 1];
    const running =
        last?.role === "assistant" && last.parts.some((part) => part.status === CallStatus.RUNNING);
    return running ? ChatStatus.RUNNING_TOOLS : ChatStatus.THINKING;
}
