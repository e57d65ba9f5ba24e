/** @odoo-module */
/**
 * A long call as a user watches it (tests/test_chat_tour.py TestCallProgressTour scripts the model
 * to call `progress` and `slow` at once, on a server with the --notifying tools): the progress bar
 * fills with the server's messages, the user stops the slow call with its stop control, and the
 * answer comes all the same, the stopped call shown as cancelled.
 */
import {registry} from "@web/core/registry";

const PROGRESS = '.o_ai_chat_tool_block[data-tool="progress"]';
const SLOW = '.o_ai_chat_tool_block[data-tool="slow"]';

registry.category("web_tour.tours").add("ai_mcp_call_progress_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Progress assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Progress assistant"))'},
        {
            content: "ask for the long job",
            trigger: ".o_ai_chat_composer_input",
            run: "edit Run the long job.",
        },
        {trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {
            content: "the progress bar shows how far the call is",
            trigger: `${PROGRESS}[data-status="running"] .o_ai_chat_tool_progress .progress-bar[style*="width"]`,
        },
        {
            content: "with the server's latest message",
            trigger: `${PROGRESS} .o_ai_chat_tool_progress_message:contains("step")`,
        },
        {
            content: "stop the slow call",
            trigger: `${SLOW}[data-status="running"] .o_ai_chat_tool_stop`,
            run: "click",
        },
        {content: "it is shown as cancelled", trigger: `${SLOW}[data-status="cancelled"]`},
        {content: "the other call finishes", trigger: `${PROGRESS}[data-status="done"]`},
        {
            content: "the answer comes without the stopped call",
            trigger:
                '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("without the slow one")',
        },
        {content: "the turn is over", trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
        {
            content: "the stopped call says why",
            trigger: `${SLOW} .o_ai_chat_tool_header`,
            run: "click",
        },
        {trigger: `${SLOW} .o_ai_chat_tool_error code:contains("CANCELLED")`},
    ],
});
