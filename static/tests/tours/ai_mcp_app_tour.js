/** @odoo-module */
/**
 * An MCP App in the chat, as a user meets it (tests/test_app_tour.py scripts the model and serves
 * the counter app): ask, watch the counter app open in the show_counter block, and read the message
 * the app sends the chat once it has played its script (added 1, was refused a disabled tool, found
 * its sandbox closed, told the model the count); the model answers it. After a reload the app
 * renders again from the stored result, and plays its script again.
 */
import {registry} from "@web/core/registry";
import {unloadsPage} from "./series";

const BLOCK = '.o_ai_chat_tool_block[data-tool="show_counter"]';
const VIA_APP = ".o_ai_chat_message_user:has(.o_ai_chat_via_app)";

function appReady() {
    return [
        {content: "the counter block, finished", trigger: `${BLOCK}[data-status="done"]`},
        {
            content: "its app is shown, ready",
            trigger: `${BLOCK} .o_ai_mcp_app[data-state="ready"] iframe`,
        },
    ];
}

const FOUND = [
    "count=6",
    "forbidden=reset_counter of Counter server is not available in this conversation",
    "cookie=blocked",
    "parent=blocked",
    "odoo=blocked",
    "undeclared=blocked",
    "declared=ok",
    // the browser prefers dark (tests/test_app_tour.py), the chat is light: so is the app
    "scheme=light",
];

registry.category("web_tour.tours").add("ai_mcp_app_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Counter assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Counter assistant"))'},
        {
            content: "ask for a counter",
            trigger: ".o_ai_chat_composer_input",
            run: "edit Show me a counter",
        },
        {content: "Enter sends it", trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        ...appReady(),
        {
            content: "the app tells the chat",
            trigger: `${VIA_APP} .o_ai_chat_via_app:contains("Counter")`,
        },
        ...FOUND.map((text) => ({
            content: `the app found ${text}`,
            trigger: `${VIA_APP} .o_ai_chat_bubble:contains("${text}")`,
        })),
        {
            content: "the model answers the app's message",
            trigger: '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("Got it: count=6")',
        },
        {content: "the turn is over", trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},

        // reload: the app renders again from the stored result
        unloadsPage({
            content: "reload the page",
            trigger: ".o_ai_chat_conversation.active",
            run() {
                window.location.reload();
            },
        }),
        {
            content: "the conversation is open again",
            trigger: '.o_ai_chat_message_user:contains("Show me a counter")',
        },
        {content: "an app's block opens by itself", trigger: `${BLOCK}.o_expanded`},
        ...appReady(),
        // shown again, the app is told its call's stored result and plays its script once more
        {
            content: "the app tells the chat again, from one more",
            trigger: `${VIA_APP} .o_ai_chat_bubble:contains("count=7")`,
        },
        {
            content: "the model answers it",
            trigger: '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("Got it: count=7")',
        },
        {
            content: "that turn is over too",
            trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send',
        },
    ],
});
