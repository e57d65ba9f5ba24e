/**
 * A chat store (src/chat/logic/chat_store.js) on a scripted server, for the tests of the helpers that
 * share it: the streamed routes answer real `Response`s with the SSE the server sends, the JSON
 * routes answer what a test set, and the clock moves only when the helpers sleep.
 */

import {ChatStore} from "../src/chat/logic/chat_store.js";

const encoder = new TextEncoder();

/** An event of chat_state_events.mjs's `sequence()` as the server frames it. */
function frame({type, seq, ...data}) {
    return `id: ${seq}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A text/event-stream Response with these events; `broken`: the network breaks after them. */
export function eventStream(events, {broken = false} = {}) {
    const chunks = events.map((event) => encoder.encode(frame(event)));
    const body = new ReadableStream({
        pull(controller) {
            if (chunks.length) {
                controller.enqueue(chunks.shift());
            } else if (broken) {
                controller.error(new TypeError("network error"));
            } else {
                controller.close();
            }
        },
    });
    return new Response(body, {headers: {"Content-Type": "text/event-stream"}});
}

/** A refusal of a chat route: {"error": {code, message, ...}} with an HTTP status. */
export function refusal(status, error) {
    return new Response(JSON.stringify({error: error}), {
        status,
        headers: {"Content-Type": "application/json"},
    });
}

/**
 * The server side of a test: `streamed` holds the answers of the next fetches in order (a Response,
 * or a function of the request that makes one), `routes` the answers of the JSON routes (a value,
 * a function of the params, or an Error to throw). Everything asked is recorded.
 */
export class ScriptedServer {
    constructor() {
        this.streamed = [];
        this.routes = {"/ai_mcp/conversations": []};
        this.fetched = [];
        this.called = [];
        this.fetch = async (url, init) => {
            const request = {
                url,
                method: init.method,
                body: init.body && JSON.parse(init.body),
                signal: init.signal,
            };
            this.fetched.push(request);
            const answer = this.streamed.shift();
            if (!answer) {
                throw new Error(`nothing scripted for ${init.method} ${url}`);
            }
            return typeof answer === "function" ? answer(request) : answer;
        };
        this.rpc = async (route, params = {}) => {
            this.called.push({route, params});
            const answer = this.routes[route];
            if (answer instanceof Error) {
                throw answer;
            }
            return typeof answer === "function" ? answer(params) : answer;
        };
    }

    calls(route) {
        return this.called.filter((call) => call.route === route).map((call) => call.params);
    }
}

/** A clock that moves only when slept on. */
export class ManualClock {
    constructor() {
        this.time = 1_000_000;
        this.slept = [];
    }

    now() {
        return this.time;
    }

    async sleep(ms) {
        this.slept.push(ms);
        this.time += ms;
    }
}

/** A bus of Odoo's bus_service's shape: `notify` is the server sending a notification. */
export class ScriptedBus {
    constructor() {
        this.listeners = new Map();
    }

    subscribe(name, listener) {
        this.listeners.set(name, [...(this.listeners.get(name) || []), listener]);
    }

    unsubscribe(name, listener) {
        this.listeners.set(
            name,
            (this.listeners.get(name) || []).filter((candidate) => candidate !== listener)
        );
    }

    notify(name, payload) {
        for (const listener of this.listeners.get(name) || []) {
            listener(payload);
        }
    }
}

/** The env's bus as OWL's EventBus is: an EventTarget whose `trigger` sends a CustomEvent; what
 * is triggered is recorded. */
class ScriptedEnvBus extends EventTarget {
    constructor(triggered) {
        super();
        this.triggered = triggered;
    }

    trigger(name, payload) {
        this.triggered.push({name, payload});
        this.dispatchEvent(new CustomEvent(name, {detail: payload}));
    }
}

/** A store on `server`, with what the user would see recorded: notifications, the URL, tabs. */
export function storeOn(server, {assistantId = 3} = {}) {
    const seen = {notified: [], urls: [], tabs: [], triggered: []};
    const store = new ChatStore({
        rpc: server.rpc,
        fetch: server.fetch,
        clock: new ManualClock(),
        notify: (message, type) => seen.notified.push({message, type}),
        router: {pushState: (state) => seen.urls.push(state)},
        envBus: new ScriptedEnvBus(seen.triggered),
        busService: new ScriptedBus(),
        openWindow: (url, {referrer = true} = {}) =>
            seen.tabs.push(referrer ? url : {url, referrer}),
        words: {
            error: (error) => `words.error ${error.code}${error.gaveUp ? " gave up" : ""}`,
            interrupted: () => "words.interrupted",
            notOpened: () => "words.notOpened",
            runsElsewhere: () => "words.runsElsewhere",
            notStopped: (message) => `words.notStopped ${message}`,
            appBusy: (app) => `words.appBusy ${app}`,
        },
    });
    store.state.assistants = [{id: assistantId, name: "Helpdesk"}];
    store.state.assistantId = assistantId;
    return {store, seen};
}

/** Waits until the helpers' promises chained on the scripted answers have run. */
export function settle() {
    return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Lets the helpers' promises run until `done()` holds; fails, rather than hangs, if it never does. */
export async function until(done) {
    for (let turn = 0; turn < 200; turn++) {
        if (done()) {
            return;
        }
        await settle();
    }
    throw new Error("the chat never reached the state the test waits for");
}
