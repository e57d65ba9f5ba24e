/** @odoo-module */
/**
 * A tool its server runs as a task (tests/test_chat_tour.py TestTaskTour scripts the model to call
 * `hold` of testing/mcp_tasks_server.py, a task that works until stopped): the call's block shows
 * the task's state and the server's words for it, the user stops the call with its stop control,
 * which cancels the task on its server, and the block says the call was cancelled.
 */
import {registry} from "@web/core/registry";

const HOLD = '.o_ai_chat_tool_block[data-tool="hold"]';

registry.category("web_tour.tours").add("ai_mcp_task_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Task assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Task assistant"))'},
        {
            content: "ask for the report",
            trigger: ".o_ai_chat_composer_input",
            run: "edit Prepare the report.",
        },
        {trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {
            content: "the block shows the task's state and what its server says of it",
            trigger: `${HOLD}[data-status="running"] .o_ai_chat_tool_progress_message:contains("Task working: Holding report")`,
        },
        {
            content: "stop the call",
            trigger: `${HOLD}[data-status="running"] .o_ai_chat_tool_stop`,
            run: "click",
        },
        {content: "it is shown as cancelled", trigger: `${HOLD}[data-status="cancelled"]`},
        {
            content: "the answer comes without the report",
            trigger:
                '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("report was stopped")',
        },
        {content: "the turn is over", trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
    ],
});
