/** @odoo-module */
/**
 * A message sent while Odoo cannot take it (tests/test_chat_tour.py TestBusyTour: the first two
 * starts fail as with a full database pool): the status line says the server is busy and that the
 * widget tries again, then the answer streams, and the message is shown once.
 */
import {registry} from "@web/core/registry";

registry.category("web_tour.tours").add("ai_mcp_busy_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Busy assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Busy assistant"))'},
        {
            content: "ask something",
            trigger: ".o_ai_chat_composer_input",
            run: "edit Are you there?",
        },
        {trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {
            content: "the widget says it tries again",
            trigger:
                '.o_ai_chat_status_line[data-retry]:contains("The server is busy: trying again")',
        },
        {
            content: "the answer streams once the server takes the message",
            trigger: '.o_ai_chat_message_assistant:contains("Here I am.")',
        },
        {
            content: "the status line no longer speaks of retrying, and the message is shown once",
            trigger:
                '.o_ai_chat[data-status="idle"]:not(:has(.o_ai_chat_status_line[data-retry])):not(:has(.o_ai_chat_message_user ~ .o_ai_chat_message_user))',
        },
        {
            content: "the message is shown once",
            trigger: '.o_ai_chat_message_user:contains("Are you there?")',
        },
    ],
});
