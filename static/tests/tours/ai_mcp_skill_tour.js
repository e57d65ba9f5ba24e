/** @odoo-module */
/**
 * A skill in the chat (tests/test_skill_tour.py: an assistant given the invoice-review skill of a
 * skills server): the model loads the skill, the user sees its call as a block naming the skill
 * and its server, opens it to read the skill's instructions the model got, and reads the answer.
 */
import {registry} from "@web/core/registry";

import {contrastChecked} from "./contrast";

const LOAD = '.o_ai_chat_tool_block[data-tool="load_skill"]';

registry.category("web_tour.tours").add("ai_mcp_skill_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Skill assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Skill assistant"))'},
        {
            content: "ask for a review",
            trigger: ".o_ai_chat_composer_input",
            run: "edit Review the invoice.",
        },
        {trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {
            content: "the skill's block names the skill loaded, and its server",
            trigger: `${LOAD}[data-status="done"] .o_ai_chat_tool_title:contains("Load skill: invoice-review")`,
        },
        {trigger: `${LOAD} .o_ai_chat_tool_server:contains("Invoices")`},
        {
            content: "the answer follows",
            trigger:
                '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("The VAT number matches.")',
        },
        {trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
        contrastChecked("a loaded skill's block"),
        {content: "open the block", trigger: `${LOAD} .o_ai_chat_tool_header`, run: "click"},
        {
            content: "its arguments name the skill",
            trigger: `${LOAD} .o_ai_chat_tool_arguments:contains("invoice-review")`,
        },
        {
            content: "and shows the instructions the model got",
            trigger: `${LOAD} .o_ai_chat_tool_body:contains("Skill invoice-review loaded"):contains("Check the supplier's VAT number")`,
        },
    ],
});
