/** @odoo-module */
/**
 * An app that grows after the answer (tests/test_app_tour.py: the counter app plays "grow", taller
 * than an app may be inline): the chat keeps the answer in view as it keeps streaming text in view,
 * also when the app grows once the conversation is reopened, and the call's raw result is folded
 * away under "Result", below the app that shows it.
 */
import {registry} from "@web/core/registry";
import {unloadsPage} from "./series";

const BLOCK = '.o_ai_chat_tool_block[data-tool="show_counter"]';
const ANSWER = '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("Here is your counter.")';

/** Steps that wait for the app to be as tall as it may be, then check the answer is in view. */
function answerInViewBelowTheGrownApp() {
    return [
        {
            content: "the app grew as tall as it may inline",
            trigger: `${BLOCK} .o_ai_mcp_app[data-state="ready"] .o_ai_mcp_app_holder[style*="height: 600px"]`,
        },
        {
            content: "the answer is in view",
            trigger: ANSWER,
            async run() {
                // the chat follows a size change once the browser has laid it out: two frames
                for (let frame = 0; frame < 2; frame++) {
                    await new Promise((resolve) => requestAnimationFrame(resolve));
                }
                const view = document.querySelector(".o_ai_chat_scroll").getBoundingClientRect();
                const answer = this.anchor.getBoundingClientRect();
                if (answer.top < view.top || answer.bottom > view.bottom + 1) {
                    throw new Error(
                        `the answer is out of view: it spans ${answer.top}-${answer.bottom}, the chat shows ${view.top}-${view.bottom}`
                    );
                }
            },
        },
    ];
}

registry.category("web_tour.tours").add("ai_mcp_app_scroll_tour", {
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
        {content: "the turn is over", trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
        {
            content: "the call's result is folded away below its app",
            trigger: `${BLOCK} .o_ai_mcp_app + details.o_ai_chat_tool_result_fold:not([open])`,
        },
        ...answerInViewBelowTheGrownApp(),
        unloadsPage({
            content: "reopen the conversation",
            trigger: ".o_ai_chat_conversation.active",
            run() {
                window.location.reload();
            },
        }),
        {content: "it is open again", trigger: ANSWER},
        ...answerInViewBelowTheGrownApp(),
        {
            content: "the result opens on a click",
            trigger: `${BLOCK} details.o_ai_chat_tool_result_fold > summary`,
            run: "click",
        },
        {trigger: `${BLOCK} details.o_ai_chat_tool_result_fold[open] .o_ai_chat_tool_result`},
    ],
});
