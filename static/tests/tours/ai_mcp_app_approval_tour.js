/** @odoo-module */
/**
 * Apps calling tools that need the user's approval (tests/test_app_approval_tour.py scripts the
 * model and serves the apps):
 * - a dashboard polls its app-only tool, three calls at once then one by one: one dialog asks,
 *   "Allow for this app in this conversation" lets every poll run, no other dialog is left, and
 *   after a reload it polls again without asking;
 * - a chart fetches its data with the tool the model called while that call waits for approval:
 *   the app's call waits for the model's question instead of asking over it; that call is allowed
 *   for this conversation, so the app's call runs without asking, and after a reload the app
 *   fetches again without asking; the header lists the approval, and the user revokes it there;
 * - the same chart, its model's call allowed once: the app's fetch then asks, in words that name
 *   the tool once (the app is named after it) and say what "Allow once" covers; allowed once, it
 *   runs. In the model's dialog, the focused "Allow once" does not look chosen.
 */
import {registry} from "@web/core/registry";
import {unloadsPage} from "./series";

const VIA_APP = ".o_ai_chat_message_user:has(.o_ai_chat_via_app)";
const APP_DIALOG = ".o_ai_app_approval_dialog";

function ask(text) {
    return [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Apps assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Apps assistant"))'},
        {content: "ask", trigger: ".o_ai_chat_composer_input", run: `edit ${text}`},
        {content: "Enter sends it", trigger: ".o_ai_chat_composer_input", run: "press Enter"},
    ];
}

function appReady(tool) {
    const block = `.o_ai_chat_tool_block[data-tool="${tool}"]`;
    return [
        {content: `the ${tool} block, finished`, trigger: `${block}[data-status="done"]`},
        {
            content: "its app is shown, ready",
            trigger: `${block} .o_ai_mcp_app[data-state="ready"] iframe`,
        },
    ];
}

function answered(number) {
    return [
        {
            content: `the model answers the app (#${number})`,
            trigger: `.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("Got it #${number}.")`,
        },
        {content: "the turn is over", trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
        {content: "no approval dialog is left", trigger: `body:not(:has(${APP_DIALOG}))`},
    ];
}

function reload() {
    return [
        unloadsPage({
            content: "reload the page",
            trigger: ".o_ai_chat_conversation.active",
            run() {
                window.location.reload();
            },
        }),
        {content: "the conversation is open again", trigger: ".o_ai_chat_conversation.active"},
    ];
}

registry.category("web_tour.tours").add("ai_mcp_app_polling_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        ...ask("Show me the system stats"),
        ...appReady("show_stats"),
        {
            content: "the polls that wait for the user share one dialog, naming the app's tool",
            trigger: `${APP_DIALOG} .o_ai_app_approval_tool:contains("Poll stats")`,
        },
        {
            content: "allow it for this app in this conversation",
            trigger: `${APP_DIALOG} .o_ai_app_allow_app`,
            run: "click",
        },
        {
            content: "every poll ran",
            trigger: `${VIA_APP} .o_ai_chat_bubble:contains("polled=6 ok=6 declined=0")`,
        },
        ...answered(1),
        ...reload(),
        ...appReady("show_stats"),
        ...answered(2),
    ],
});

registry.category("web_tour.tours").add("ai_mcp_app_refetch_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        ...ask("Show me the cohort chart"),
        {
            content: "the model's call asks",
            trigger: '.o_ai_chat_approval_dialog [data-tool="show_cohort"]',
        },
        {
            content:
                "its app, shown meanwhile, waits for that answer about its own fetch with the same tool",
            trigger: '.o_ai_mcp_app_waiting:contains("Cohort data")',
        },
        {content: "instead of asking over it", trigger: `body:not(:has(${APP_DIALOG}))`},
        {
            content: "allow the model's call for this conversation",
            trigger:
                '.o_ai_chat_approval_dialog [data-tool="show_cohort"] .o_ai_chat_allow_conversation',
            run: "click",
        },
        {
            content: "send the decision",
            trigger: ".o_ai_chat_approval_send:enabled",
            run: "click",
        },
        {
            content: "the app waits no more",
            trigger: "body:not(:has(.o_ai_mcp_app_waiting))",
        },
        ...appReady("show_cohort"),
        {
            content: "the app's fetch ran without asking again",
            trigger: `${VIA_APP} .o_ai_chat_bubble:contains("refetch=ok metric=revenue")`,
        },
        ...answered(1),
        ...reload(),
        ...appReady("show_cohort"),
        ...answered(2),
        {
            content: "open the tools allowed in this conversation",
            trigger: ".o_ai_chat_remembered_toggle",
            run: "click",
        },
        {
            content: "revoke the chart's tool",
            trigger:
                '.o_ai_chat_remembered_item[data-tool="show_cohort"] .o_ai_chat_remembered_revoke',
            run: "click",
        },
        {content: "none is left", trigger: ".o_ai_chat_remembered_none"},
    ],
});

/** The background of a button of the model's approval dialog. */
function background(selector) {
    return getComputedStyle(document.querySelector(selector)).backgroundColor;
}

registry.category("web_tour.tours").add("ai_mcp_app_allow_once_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        ...ask("Show me the cohort chart"),
        {
            content: "the model's call asks, its first choice focused, no choice made yet",
            trigger:
                '.o_ai_chat_approval_dialog [data-tool="show_cohort"] .o_ai_chat_allow[aria-pressed="false"]:focus',
            run() {
                const call = '.o_ai_chat_approval_dialog [data-tool="show_cohort"]';
                const focused = background(`${call} .o_ai_chat_allow`);
                const unchosen = background(`${call} .o_ai_chat_allow_conversation`);
                if (focused !== unchosen) {
                    throw new Error(
                        `the focused "Allow once" looks chosen: ${focused}, not ${unchosen}`
                    );
                }
            },
        },
        {trigger: ".o_ai_chat_approval_send:disabled"},
        {
            content: "allow the model's call once",
            trigger: '.o_ai_chat_approval_dialog [data-tool="show_cohort"] .o_ai_chat_allow',
            run: "click",
        },
        {
            content: "send the decision",
            trigger: ".o_ai_chat_approval_send:enabled",
            run: "click",
        },
        {
            content: "the app's own fetch asks, naming its tool once",
            trigger: `${APP_DIALOG} .o_ai_app_approval_tool:contains("This app wants to call its own tool, Cohort data.")`,
        },
        {
            content: "and saying what Allow once covers",
            trigger: `${APP_DIALOG} .o_ai_app_allow_once_scope:contains("same arguments")`,
        },
        {content: "allow it once", trigger: `${APP_DIALOG} .o_ai_app_allow_once`, run: "click"},
        {
            content: "the app's fetch ran",
            trigger: `${VIA_APP} .o_ai_chat_bubble:contains("refetch=ok metric=revenue")`,
        },
        ...answered(1),
    ],
});
