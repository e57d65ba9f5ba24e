/** @odoo-module */
/**
 * An assistant at work in a flow (tests/test_flows_tour.py runs the queue between the tours and
 * scripts the model: it adds 2 and 3 with the MCP tool `add`, then answers):
 * - trigger: a user makes a contact in the web client and presses the contextual button
 *   "Welcome call", which queues the run;
 * - answer: she finds the activity with the answer and the assistant's note on the contact, and
 *   the note's link opens the run's conversation with its tool call;
 * - manager: an AI manager opens the same conversation from the note's link, read only.
 */
import {registry} from "@web/core/registry";

const PARTNER = "Azure Flow Partner";
const ACTIVITY = `.o-mail-Activity:contains("Welcome call")`;
const NOTE_LINK = `.o-mail-Chatter .o-mail-Message a:contains("Open the conversation")`;

function openTheRunConversation() {
    return [
        {
            content: "the assistant's note says what it did, run as whom",
            trigger: `.o-mail-Chatter .o-mail-Message:contains("Welcome call scheduled an activity for Flow User"):contains("run as Flow User")`,
        },
        {content: "its link opens the run's conversation", trigger: NOTE_LINK, run: "click"},
        {
            content: "the instruction about the contact",
            trigger: `.o_ai_chat_message_user:contains("Draft a welcome call for ${PARTNER} of Gent.")`,
        },
        {
            content: "the tool call it made, finished",
            trigger: '.o_ai_chat_tool_block[data-tool="add"][data-status="done"]',
        },
        {
            content: "and the answer",
            trigger: `.o_ai_chat_message_assistant .o_ai_chat_markdown strong:contains("${PARTNER}")`,
        },
    ];
}

registry.category("web_tour.tours").add("ai_mcp_flow_trigger_tour", {
    steps: () => [
        {
            content: "a new contact",
            trigger: '.o_form_view .o_field_widget[name="name"] input',
            run: `edit ${PARTNER}`,
        },
        {trigger: '.o_form_view .o_field_widget[name="city"] input', run: "edit Gent"},
        {content: "save it", trigger: ".o_form_button_save", run: "click"},
        {trigger: ".o_form_view .o_form_saved"},
        {
            content: "the contact's actions",
            trigger: ".o_cp_action_menus .dropdown-toggle",
            run: "click",
        },
        {
            content: "press the contextual button that runs the assistant",
            trigger: '.o-dropdown--menu .o-dropdown-item:contains("Welcome call")',
            run: "click",
        },
        {
            content: "it only queued the run, and says so: the answer comes later",
            trigger: '.o_notification:contains("Welcome call: queued for 1 record(s)")',
        },
        {
            trigger: `.o_form_view .o_form_saved .o_field_widget[name="name"] input:value("${PARTNER}")`,
        },
    ],
});

registry.category("web_tour.tours").add("ai_mcp_flow_answer_tour", {
    steps: () => [
        {
            content: "the activity the assistant scheduled, with its answer",
            trigger: `${ACTIVITY} .o-mail-Activity-note strong:contains("${PARTNER}")`,
        },
        {trigger: `${ACTIVITY} .o-mail-Activity-note:contains("2 + 3 = 5 days since signing")`},
        ...openTheRunConversation(),
        {
            content: "it is hers: she may write in it",
            trigger: '.o_ai_chat_composer_input:not([placeholder*="read only"])',
        },
    ],
});

registry.category("web_tour.tours").add("ai_mcp_flow_manager_tour", {
    steps: () => [
        ...openTheRunConversation(),
        {
            content: "it is not the manager's: she reads it, and cannot write in it",
            trigger: '.o_ai_chat_composer_input[placeholder*="read only"]',
        },
        {trigger: ".o_ai_chat_send:disabled"},
    ],
});
