/** @odoo-module */
/**
 * A user near her monthly token budget (tests/test_budget_tour.py: 1,000 tokens, "Research"): her
 * first answer spends 90% of it and the chat warns her so; her second spends the rest; her third
 * message is refused with the sentence naming the budget and who can raise it (the sentence only,
 * not the error's code), and stays shown.
 */
import {registry} from "@web/core/registry";

const IDLE = '.o_ai_chat[data-status="idle"] .o_ai_chat_send';

function ask(text) {
    return [
        {content: `write "${text}"`, trigger: ".o_ai_chat_composer_input", run: `edit ${text}`},
        {content: "Enter sends it", trigger: ".o_ai_chat_composer_input", run: "press Enter"},
    ];
}

registry.category("web_tour.tours").add("ai_mcp_budget_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Budget assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Budget assistant"))'},
        ...ask("First question"),
        {
            content: "the answer comes",
            trigger: '.o_ai_chat_message_assistant:contains("First answer.")',
        },
        {
            content: "the chat warns that the budget is nearly spent",
            trigger:
                '.o_ai_chat_warning[data-code="BUDGET_NEAR"]:contains("monthly AI budget “Research” (1,000 tokens) is 90% spent")',
        },
        {trigger: IDLE},
        ...ask("Second question"),
        {
            content: "the second answer spends the rest",
            trigger: '.o_ai_chat_message_assistant:contains("Second answer.")',
        },
        {trigger: IDLE},
        ...ask("Third question"),
        {
            content: "the third is refused, naming the budget and who can raise it",
            trigger:
                '.o_ai_chat_error[data-code="BUDGET_SPENT"]:contains("Your monthly AI budget “Research” (1,000 tokens) is spent. An AI manager (")',
        },
        {
            content: "the banner says the sentence, not the error's code",
            trigger: '.o_ai_chat_error[data-code="BUDGET_SPENT"]:not(:contains("BUDGET_SPENT"))',
        },
        {
            content: "what she wrote is still shown",
            trigger: '.o_ai_chat_message_user:contains("Third question")',
        },
    ],
});
