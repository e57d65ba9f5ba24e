/** @odoo-module */
/**
 * A user picks the greeting prompt of a server that completes (tests/test_chat_tour.py
 * TestCompletionTour), types the start of a name and picks a suggestion with the keyboard, then
 * picks a style with the mouse among those the server suggests for that name, and sends it.
 */
import {registry} from "@web/core/registry";

import {contrastChecked} from "./contrast";

const NAME = '.o_ai_chat_prompt_form input[id$="_name"]';
const STYLE = '.o_ai_chat_prompt_form input[id$="_style"]';

registry.category("web_tour.tours").add("ai_mcp_completion_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Completing assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Completing assistant"))'},
        {content: "look for the greeting", trigger: ".o_ai_chat_composer_input", run: "edit /gree"},
        {trigger: '.o_ai_chat_prompt_menu .o_ai_chat_prompt.active[data-prompt="greeting"]'},
        {content: "pick it", trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {content: "type the start of a name", trigger: NAME, run: "edit al"},
        {
            content: "the server suggests the names that start so",
            trigger:
                '.o_ai_chat_prompt_form .o_schema_form_suggestions:has([data-value="Alan"]):has([data-value="Alonzo"]):not(:has([data-value="Ada"]))',
        },
        contrastChecked("a prompt argument's suggestions"),
        {content: "highlight the first one", trigger: NAME, run: "press ArrowDown"},
        {trigger: '.o_schema_form_suggestion[data-value="Alan"] .ui-state-active'},
        {content: "pick it with Enter", trigger: NAME, run: "press Enter"},
        {
            content: "the name is the suggestion, the list closed",
            trigger:
                '.o_ai_chat_prompt_form:not(:has(.o_schema_form_suggestions)) input[id$="_name"]:value("Alan")',
        },
        {content: "type a style", trigger: STYLE, run: "edit w"},
        {
            content: "the styles suggested for Alan",
            trigger: '.o_schema_form_suggestions:has([data-value="warm"]) [data-value="witty"]',
            run: "click",
        },
        {trigger: `${STYLE}:value("witty")`},
        {trigger: ".o_ai_chat_prompt_form .o_ai_chat_prompt_send", run: "click"},
        {
            content: "the prompt is sent with the values picked",
            trigger:
                '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("You asked: Write a witty greeting for Alan.")',
        },
    ],
});
