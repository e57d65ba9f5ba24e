/** @odoo-module */
/**
 * Resources in the chat (tests/test_chat_tour.py TestResourceTour: a server with resources): a tool
 * answers with a link that the user opens in its block; then the user attaches a day's note (a
 * template, its value asked by the form) and sends it with a question.
 */
import {registry} from "@web/core/registry";

const LINK = '.o_ai_chat_tool_block[data-tool="link_note"]';

registry.category("web_tour.tours").add("ai_mcp_resource_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Resource assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Resource assistant"))'},
        {
            content: "ask for the note",
            trigger: ".o_ai_chat_composer_input",
            run: "edit Show me today's note",
        },
        {trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {
            content: "open the call",
            trigger: `${LINK}[data-status="done"] .o_ai_chat_tool_header`,
            run: "click",
        },
        {
            content: "open the link it returned",
            trigger: `${LINK} .o_ai_chat_result_link:contains("notes://today") .o_ai_chat_result_open`,
            run: "click",
        },
        {
            content: "the note is read from the server",
            trigger: `${LINK} .o_ai_chat_result_opened pre:contains("water the plants")`,
        },
        {trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
        {content: "attach a resource", trigger: ".o_ai_chat_attach", run: "click"},
        {
            content: "the server's resources and templates are listed",
            trigger: '.o_ai_chat_resource_entry[data-uri="notes://today"]',
        },
        {trigger: ".o_ai_chat_resource_search", run: "edit day"},
        {
            content: "pick the day template",
            trigger: '.o_ai_chat_resource_entry[data-uri="notes://day/{day}"]',
            run: "click",
        },
        {
            content: "give its value",
            trigger: '.o_ai_chat_resource_picker input[id$="_day"]',
            run: "edit Monday",
        },
        {trigger: ".o_ai_chat_resource_picker .o_ai_chat_resource_read", run: "click"},
        {
            content: "it is attached",
            trigger: '.o_ai_chat_attachment[data-uri="notes://day/Monday"]',
        },
        {content: "ask about it", trigger: ".o_ai_chat_composer_input", run: "edit Summarise it"},
        {trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {
            content: "the note went with the message",
            trigger: '.o_ai_chat_message_user:contains("[Attached resource notes://day/Monday")',
        },
        {
            content: "the model read it",
            trigger:
                '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("I read 1 attached resource(s).")',
        },
        {
            trigger:
                '.o_ai_chat[data-status="idle"]:not(:has(.o_ai_chat_attachment)) .o_ai_chat_send',
        },
    ],
});
