/** @odoo-module */
/**
 * Ask AI on a form (tests/test_ask_ai_tour.py scripts the model): on a partner's form, the
 * chatter's Ask AI opens the chat about that partner; the question's answer is a Markdown table
 * whose first cell links to the partner, and the link opens the partner's form over the chat,
 * which the breadcrumbs bring back as it was.
 */
import {registry} from "@web/core/registry";

const PARTNER = "Azure Tour Partner";
const TABLE = ".o_ai_chat_message_assistant .o_ai_chat_markdown table";

registry.category("web_tour.tours").add("ai_mcp_ask_ai_tour", {
    steps: () => [
        {
            content: "the partner's form, with Ask AI beside the chatter",
            trigger: `.o_form_view .o-mail-Chatter .o_ai_mcp_ask_ai`,
            run: "click",
        },
        {
            content: "the chat is about the partner",
            trigger: `.o_ai_chat_header .o_ai_chat_subject:contains("${PARTNER}")`,
        },
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Ask AI assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Ask AI assistant"))'},
        {
            content: "ask about it",
            trigger: ".o_ai_chat_composer_input",
            run: "edit Where is this contact?",
        },
        {trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {
            content: "the answer is a table",
            trigger: `${TABLE} thead th:contains("City")`,
        },
        {trigger: `${TABLE} tbody td.text-center:contains("Paris")`},
        {content: "the turn is over", trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
        {
            content: "the conversation keeps its record",
            trigger: `.o_ai_chat_header .o_ai_chat_subject:contains("${PARTNER}")`,
        },
        {
            content: "its first cell links to the partner: open it",
            trigger: `${TABLE} tbody td:first-child a[data-res-model="res.partner"]:contains("${PARTNER}")`,
            run: "click",
        },
        {
            content: "the partner's form opens over the chat",
            trigger: `.o_breadcrumb:contains("AI Assistant"):contains("${PARTNER}")`,
        },
        {trigger: `.o_form_view .o_field_widget[name="name"] input:value("${PARTNER}")`},
        {
            content: "back to the chat",
            trigger: '.o_breadcrumb a:contains("AI Assistant")',
            run: "click",
        },
        {
            content: "the same conversation, with its table",
            trigger: `${TABLE} tbody td:first-child a:contains("${PARTNER}")`,
        },
        {trigger: `.o_ai_chat_header .o_ai_chat_subject:contains("${PARTNER}")`},
    ],
});
