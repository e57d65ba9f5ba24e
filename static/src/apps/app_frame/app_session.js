/** @odoo-module */
import {loadJS} from "@web/core/assets";

import {blockOutcome, decideDisplayMode, storedOutcome} from "@ai_mcp/apps/logic/app_host";
import {CallStatus} from "@ai_mcp/common/chat_status";

/** The vendored host bridge (static/lib/ext_apps/README.md), loaded the first time an app shows. */
export const BRIDGE_URL = "/ai_mcp/static/lib/ext_apps/app_bridge.js";
const HOST_INFO = Object.freeze({name: "odoo-ai-mcp", title: "Odoo AI Assistant", version: "18.0"});
/** How long a torn-down app may take to clean up before its frame goes, in milliseconds. */
const TEARDOWN_WAIT_MS = 2000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A copy postMessage can send: the block comes from the chat's reactive state, whose nested
 * objects may be OWL proxies, and a proxy cannot be cloned into another window. */
const plain = (value) => (value === undefined ? value : JSON.parse(JSON.stringify(value)));

/** The bridge's classes, loaded once for the page. */
export async function loadBridge() {
    if (!window.McpAppBridge) {
        await loadJS(BRIDGE_URL);
    }
    return window.McpAppBridge;
}

/**
 * One shown app: the AppBridge that speaks to the sandbox page in its frame, and what the app has
 * been told of its call (its input, partial while the model writes it, then its result or its
 * cancellation, each once and in that order).
 *
 * `info`: the server's /ai_mcp/app/open answer. `requests`: an AppRequests. `view`: what the
 * component lends it:
 *   block()              the call's tool block as the reducer has it now
 *   displayMode()        "inline" or "fullscreen"
 *   setDisplayMode(mode) show the app so
 *   ready()              the app is initialised
 *   resize(height)       the app asks for this height
 *   closeRequested()     the app asks to be closed
 */
export class AppSession {
    constructor({info, requests, view, context, capabilities}) {
        this.info = info;
        this.requests = requests;
        this.view = view;
        this.context = context;
        this.capabilities = capabilities;
        this.bridge = null;
        this.initialized = false;
        this.closed = false;
        this.sent = {partial: undefined, input: false, outcome: false};
    }

    /** Connects to the frame's window; the frame's page may only be loaded after this. */
    async connect(frameWindow) {
        const {AppBridge, PostMessageTransport} = await loadBridge();
        const bridge = new AppBridge(null, HOST_INFO, this.capabilities, {
            hostContext: this.context,
        });
        this.bridge = bridge;
        const {html, csp, permissions} = this.info;
        bridge.onsandboxready = () => {
            bridge.sendSandboxResourceReady({html, csp: csp || {}, permissions: permissions || {}});
        };
        bridge.oninitialized = () => {
            this.initialized = true;
            this.view.ready();
            this.sync();
        };
        bridge.onsizechange = ({height}) => this.view.resize(height);
        bridge.onrequestdisplaymode = async ({mode}) => {
            const modes = bridge.getAppCapabilities()?.availableDisplayModes;
            const decided = decideDisplayMode(mode, modes, this.view.displayMode());
            this.view.setDisplayMode(decided);
            return {mode: decided};
        };
        bridge.onrequestteardown = () => this.view.closeRequested();
        bridge.onloggingmessage = ({level, logger, data}) => {
            // eslint-disable-next-line no-console
            console.debug(`[MCP app ${this.info.uri}]`, level, logger ?? "", data);
        };
        const requests = this.requests;
        bridge.oncalltool = (params) => requests.callTool(params);
        bridge.onreadresource = (params) => requests.readResource(params);
        bridge.onupdatemodelcontext = (params) => requests.updateModelContext(params);
        bridge.onmessage = (params) => requests.message(params);
        bridge.onopenlink = (params) => requests.openLink(params);
        bridge.ondownloadfile = (params) => requests.downloadFile(params);
        await bridge.connect(new PostMessageTransport(frameWindow, frameWindow));
    }

    /** A new host context (display mode, room, ...): the app hears of the fields that changed. */
    setContext(context) {
        this.context = context;
        if (this.bridge && !this.closed) {
            this.bridge.setHostContext(context);
        }
    }

    /**
     * Tells the app what it has not been told yet of its call, as the block now is: the arguments
     * so far while the model writes them, then the complete arguments, then how the call ended.
     */
    sync() {
        if (!this.initialized || this.closed) {
            return;
        }
        const block = this.view.block();
        if (block.status === CallStatus.PREPARING) {
            if (block.arguments && block.arguments !== this.sent.partial) {
                this.sent.partial = block.arguments;
                this.notify(this.bridge.sendToolInputPartial({arguments: plain(block.arguments)}));
            }
            return;
        }
        if (!this.sent.input) {
            this.sent.input = true;
            const args = block.arguments ?? this.info.arguments ?? {};
            this.notify(this.bridge.sendToolInput({arguments: plain(args)}));
        }
        if (!this.sent.outcome && block.result) {
            this.sent.outcome = true;
            this.finish(block);
        }
    }

    /** The call's result as the server stored it (the MCP result, _meta and all), or as the chat
     * has it when nothing is stored; a cancellation as such. */
    async finish(block) {
        let outcome = blockOutcome(block);
        if (outcome?.kind === "result") {
            let stored = this.info;
            if (!stored.result && !stored.cancelled) {
                stored = await this.requests.open().catch(() => ({}));
            }
            outcome = storedOutcome(stored) ?? outcome;
        }
        if (!outcome || this.closed) {
            return;
        }
        this.notify(
            outcome.kind === "result"
                ? this.bridge.sendToolResult(plain(outcome.params))
                : this.bridge.sendToolCancelled(plain(outcome.params))
        );
    }

    /**
     * Asks the app to clean up and waits for its answer up to `wait` milliseconds, then closes the
     * bridge; the caller removes the frame. Without `wait` (the page or the chat goes away) the
     * request is sent and the bridge closed at once.
     */
    async teardown(reason, {wait = TEARDOWN_WAIT_MS} = {}) {
        if (this.closed || !this.bridge) {
            this.closed = true;
            return;
        }
        this.closed = true;
        if (this.initialized) {
            const answered = this.bridge.teardownResource({reason}).catch(() => {});
            if (wait) {
                await Promise.race([answered, sleep(wait)]);
            }
        }
        await this.bridge.close().catch(() => {});
    }

    /** A notification the frame may no longer take (it was removed meanwhile) is lost, quietly. */
    notify(sending) {
        sending?.catch?.(() => {});
    }
}
