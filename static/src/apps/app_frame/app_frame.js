/** @odoo-module */
import {Component, onMounted, onWillUnmount, toRaw, useEffect, useRef, useState} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";
import {user} from "@web/core/user";
import {useService} from "@web/core/utils/hooks";

import {
    clampHeight,
    hostCapabilities,
    hostContext,
    renderedScheme,
    shouldTearDown,
    styleVariables,
    TEARDOWN_AFTER_MS,
} from "@ai_mcp/apps/logic/app_host";
import {AppRequests} from "@ai_mcp/apps/logic/app_requests";
import {CallStatus} from "@ai_mcp/common/chat_status";
import {AppAsk} from "./app_ask";
import {AppSession, loadBridge} from "./app_session";

/** The frame runs the sandbox page with an opaque origin: never allow-same-origin. No popups: a
 * link leaves an app only through ui/open-link, which the user confirms (apps/logic/app_requests.js). */
const SANDBOX = "allow-scripts allow-forms allow-modals";
/** The fullscreen overlay's header, in pixels (app_frame.scss). */
const HEADER_HEIGHT = 48;
const FIRST_HEIGHT = 200;
/** How long an app may take to answer ui/initialize once its page loads, in milliseconds. */
const START_LIMIT_MS = 30_000;
/** How often, and how many times, an app whose call the server has not stored yet is asked for. */
const OPEN_RETRY_MS = 300;
const OPEN_RETRIES = 20;

/**
 * The MCP app of a tool call, in the call's block: a frame on the Odoo server's sandbox page, into
 * which the page loads the app's HTML, and the bridge (app_session.js) through which the app hears
 * of its call and asks the host for things (apps/logic/app_requests.js, on the chat's store; what
 * it shows the user, app_ask.js). It opens when its block is first
 * expanded, from what the server stored for the call, so a reopened conversation shows its apps
 * without calling any tool again; it is torn down when its block stays collapsed for a minute (and
 * shown again on expanding), when the chat leaves the conversation, and when the page goes away.
 *
 * Fullscreen is the same element styled over the window: the frame is never moved in the
 * document, which would reload the app.
 *
 * data-state: loading, ready, error (`.o_ai_mcp_app_error` says why) or closed.
 */
export class AppFrame extends Component {
    static template = "ai_mcp.AppFrame";
    static props = {
        block: Object,
        conversationId: {type: [Number, {value: null}], optional: true},
        store: Object, // the chat's store (chat/logic/chat_store.js)
        turns: Object, // its ChatTurns, which send an app's messages as the user's
    };

    setup() {
        this.state = useState({
            phase: "closed", // loading, ready, error or closed
            error: null,
            closedByApp: false,
            displayMode: "inline",
            height: FIRST_HEIGHT,
            appTitle: null,
            prefersBorder: false,
        });
        this.rootRef = useRef("root");
        this.holderRef = useRef("holder");
        this.alive = true;
        this.info = null; // the /ai_mcp/app/open answer, kept out of the state: it is posted to
        // the frame, and a reactive proxy cannot be
        this.session = null;
        this.frame = null;
        this.inlineWidth = 0;
        this.generation = 0;
        this.collapsedSince = null;
        this.teardownTimer = null;
        this.startTimer = null;
        const {conversationId, store, turns} = this.props;
        const {id: callId, server, app} = this.props.block;
        const call = {conversationId, callId, server, app};
        this.requests = new AppRequests(store, turns, call, new AppAsk(useService("dialog"), this));
        this.requestsState = useState(this.requests.state);
        this.listenToWindow();
        useEffect(
            () => this.follow(),
            () => {
                const block = this.props.block;
                return [block.expanded, block.status, block.arguments, block.result];
            }
        );
        onWillUnmount(() => {
            this.alive = false;
            this.requests.dispose();
            this.close("conversation closed", {wait: 0});
        });
    }

    /** The page goes away, Escape leaves fullscreen, the window's size is the app's room. */
    listenToWindow() {
        const listeners = {
            pagehide: () => this.close("page closed", {wait: 0}),
            keydown: (event) => {
                if (event.key === "Escape" && this.state.displayMode === "fullscreen") {
                    this.setDisplayMode("inline");
                }
            },
            resize: () => {
                if (this.props.block.expanded) {
                    this.session?.setContext(this.context());
                }
            },
        };
        onMounted(() => {
            for (const [name, listener] of Object.entries(listeners)) {
                window.addEventListener(name, listener);
            }
        });
        onWillUnmount(() => {
            for (const [name, listener] of Object.entries(listeners)) {
                window.removeEventListener(name, listener);
            }
        });
    }

    get title() {
        const block = this.props.block;
        return this.state.appTitle || block.title || block.tool || _t("App");
    }

    get waitingText() {
        return _t(
            "The app waits for your answer about %(tools)s, asked for the assistant's call.",
            {
                tools: this.requestsState.waitingFor.join(", "),
            }
        );
    }

    get fullscreen() {
        return this.state.displayMode === "fullscreen";
    }

    get holderStyle() {
        return this.fullscreen ? "" : `height: ${this.state.height}px`;
    }

    /** The block changed: open or tear down the app as it is shown or hidden, tell it the news. */
    follow() {
        const block = this.props.block;
        if (!block.expanded && this.state.closedByApp) {
            this.state.closedByApp = false; // expanding it again shows it again
        }
        if (block.expanded) {
            this.collapsedSince = null;
            clearTimeout(this.teardownTimer);
            const closed = this.state.phase === "closed" && !this.state.closedByApp;
            if (closed && this.props.conversationId) {
                this.start();
            }
        } else if (this.session && this.collapsedSince === null) {
            this.collapsedSince = Date.now();
            clearTimeout(this.teardownTimer);
            this.teardownTimer = setTimeout(() => this.tearDownIfHidden(), TEARDOWN_AFTER_MS + 1);
        }
        this.session?.sync();
    }

    /** What the server opens the app of a call by while the model still writes it (the call is
     * stored once its arguments are complete): its server, tool and app; null once written. */
    writing() {
        const block = this.props.block;
        return block.status === CallStatus.PREPARING
            ? {server: block.server, tool: block.tool, app: block.app}
            : null;
    }

    tearDownIfHidden() {
        if (shouldTearDown(this.collapsedSince, Date.now())) {
            this.close("hidden");
        }
    }

    // -- opening and closing -------------------------------------------------------------------

    async start(attempt = 0) {
        const generation = attempt ? this.generation : ++this.generation;
        Object.assign(this.state, {phase: "loading", error: null, closedByApp: false});
        const info = await this.opened(generation, attempt);
        if (!info || generation !== this.generation) {
            return;
        }
        if (info.error) {
            this.fail(generation, info.error.message || info.error.code);
            return;
        }
        this.info = info;
        // the server names the app (its tool's title, else its server's), as it names it in
        // "via <app>": a call still being written has no title of its own yet
        this.state.appTitle = info.title || null;
        this.state.prefersBorder = info.prefers_border === true;
        const frame = this.makeFrame(info);
        this.session = this.makeSession(info, generation);
        try {
            await this.session.connect(frame.contentWindow);
        } catch (error) {
            this.fail(
                generation,
                _t("The app could not be opened: %(error)s", {error: error.message})
            );
            return;
        }
        // the page announces itself once loaded: the bridge listens before it loads
        frame.src = info.sandbox_url;
        this.startTimer = setTimeout(() => {
            if (generation === this.generation && this.state.phase === "loading") {
                this.fail(
                    generation,
                    _t("The app did not start within %(seconds)s seconds.", {
                        seconds: START_LIMIT_MS / 1000,
                    })
                );
            }
        }, START_LIMIT_MS);
    }

    /** The server's /ai_mcp/app/open answer once the bridge is loaded; null when the app does not
     * open now (it is asked again, it failed, or another start superseded this one). */
    async opened(generation, attempt) {
        try {
            const [info] = await Promise.all([this.requests.open(this.writing()), loadBridge()]);
            return info;
        } catch (error) {
            if (generation !== this.generation) {
                return null;
            }
            // the turn stores a call a moment after the browser hears of it (its events are
            // committed in batches, the last ones when the answer ends): until then the server
            // knows no such call, and the app waits for it rather than failing
            if (attempt < OPEN_RETRIES) {
                this.startTimer = setTimeout(() => this.start(attempt + 1), OPEN_RETRY_MS);
                return null;
            }
            this.fail(
                generation,
                _t("The app could not be opened: %(error)s", {error: error.message})
            );
            return null;
        }
    }

    /** The sandboxed frame the app runs in, in its holder. */
    makeFrame(info) {
        const frame = document.createElement("iframe");
        frame.className = "o_ai_mcp_app_frame";
        frame.setAttribute("sandbox", SANDBOX);
        if (info.allow) {
            frame.setAttribute("allow", info.allow);
        }
        frame.title = this.title;
        // the app's prefers-color-scheme is the one of its frame's color-scheme (the sandbox page
        // passes it on): Odoo's, not the browser's, as the theme of its host context says
        frame.style.colorScheme = this.context().theme;
        this.holderRef.el.replaceChildren(frame);
        this.frame = frame;
        return frame;
    }

    makeSession(info, generation) {
        return new AppSession({
            info,
            requests: this.requests,
            context: this.context(),
            capabilities: hostCapabilities({permissions: info.permissions, csp: info.csp}),
            view: {
                block: () => toRaw(this.props.block),
                displayMode: () => this.state.displayMode,
                setDisplayMode: (mode) => this.setDisplayMode(mode),
                ready: () => this.ready(generation),
                resize: (height) => this.resize(height),
                closeRequested: () => this.close("requested by the app", {byApp: true}),
            },
        });
    }

    ready(generation) {
        if (generation === this.generation) {
            clearTimeout(this.startTimer);
            this.state.phase = "ready";
        }
    }

    fail(generation, message) {
        if (generation !== this.generation || !this.alive) {
            return;
        }
        this.session?.teardown("error", {wait: 0});
        this.session = null;
        this.removeFrame();
        Object.assign(this.state, {phase: "error", error: message, displayMode: "inline"});
    }

    /** Tears the app down (waiting a moment for it to clean up, unless `wait` is 0) and removes
     * its frame. */
    async close(reason, {wait, byApp = false} = {}) {
        const session = this.session;
        const generation = ++this.generation;
        this.session = null;
        this.collapsedSince = null;
        clearTimeout(this.teardownTimer);
        clearTimeout(this.startTimer);
        if (session) {
            await session.teardown(reason, wait === undefined ? {} : {wait});
        }
        if (generation === this.generation && this.alive) {
            this.removeFrame();
            Object.assign(this.state, {phase: "closed", closedByApp: byApp, displayMode: "inline"});
        }
    }

    removeFrame() {
        this.frame?.remove();
        this.frame = null;
    }

    retry() {
        this.start();
    }

    // -- what the app asks of its container ------------------------------------------------------

    context() {
        const root = this.rootRef.el;
        if (root && !root.classList.contains("o_ai_mcp_app_fullscreen")) {
            this.inlineWidth = root.clientWidth; // the chat column's width, measured while inline
        }
        return hostContext({
            colorScheme: renderedScheme(
                [document.body, document.documentElement].map(
                    (element) => getComputedStyle(element).backgroundColor
                )
            ),
            lang: user.lang,
            timeZone: user.tz || Intl.DateTimeFormat().resolvedOptions().timeZone,
            displayMode: this.state.displayMode,
            inlineWidth: this.inlineWidth,
            viewport: {width: window.innerWidth, height: window.innerHeight},
            headerHeight: HEADER_HEIGHT,
            styles: styleVariables((name) =>
                getComputedStyle(document.body).getPropertyValue(name)
            ),
            tool: this.info?.tool ?? null,
        });
    }

    setDisplayMode(mode) {
        if (mode !== this.state.displayMode) {
            this.state.displayMode = mode;
            this.session?.setContext(this.context());
        }
    }

    resize(height) {
        const clamped = clampHeight(height);
        if (clamped !== null) {
            this.state.height = clamped;
        }
    }
}
