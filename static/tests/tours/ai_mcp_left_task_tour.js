/** @odoo-module */
/**
 * A task its call left running after the answer (tests/test_chat_tour.py TestLeftTaskTour: the turn
 * waits one second for `hold` of testing/mcp_tasks_server.py, a task that works until stopped): the
 * answer ends, the call's block says its task is running and keeps its stop control; the user stops
 * it, the task is cancelled on its server, and the block says so without a new message.
 */
import {registry} from "@web/core/registry";

const HOLD = '.o_ai_chat_tool_block[data-tool="hold"]';

registry.category("web_tour.tours").add("ai_mcp_left_task_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Export assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Export assistant"))'},
        {
            content: "ask for the export",
            trigger: ".o_ai_chat_composer_input",
            run: "edit Export the ledger.",
        },
        {trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {
            content: "the answer says the export goes on",
            trigger:
                '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("goes on on the server")',
        },
        {content: "the turn is over", trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
        {
            content: "the call's block says its task still runs",
            trigger: `${HOLD} .o_ai_chat_tool_status:contains("Task running")`,
        },
        {
            content: "stop the task",
            trigger: `${HOLD} .o_ai_chat_tool_stop`,
            run: "click",
        },
        {content: "it is shown as cancelled", trigger: `${HOLD}[data-status="cancelled"]`},
    ],
});
