/** @odoo-module */
/**
 * A user types "/" in the composer (tests/test_chat_tour.py TestPromptTour: a server with prompts),
 * narrows the list, picks the greeting with the keyboard, fills in its required argument and sends
 * it: the prompt's text is the user's message and the answer streams.
 */
import {registry} from "@web/core/registry";

import {contrastChecked} from "./contrast";
import {hovered} from "./pointer";

registry.category("web_tour.tours").add("ai_mcp_prompt_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Prompt assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Prompt assistant"))'},
        {
            content: "type / to list the prompts",
            trigger: ".o_ai_chat_composer_input",
            run: "edit /",
        },
        {
            content: "the server's prompts are listed",
            trigger: '.o_ai_chat_prompt_menu .o_ai_chat_prompt[data-prompt="daily_summary"]',
        },
        {trigger: '.o_ai_chat_prompt_menu .o_ai_chat_prompt[data-prompt="review"]'},
        ...hovered(
            '.o_ai_chat_prompt_menu .o_ai_chat_prompt:not(.active)[data-prompt="review"]',
            "a prompt that is not the active one"
        ),
        contrastChecked("the prompts listed, one hovered"),
        {content: "narrow the list", trigger: ".o_ai_chat_composer_input", run: "edit /gree"},
        {
            trigger:
                '.o_ai_chat_prompt_menu:not(:has([data-prompt="review"])) .o_ai_chat_prompt.active[data-prompt="greeting"]',
        },
        contrastChecked("the prompts listed, one active"),
        {content: "pick it with Enter", trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {
            content: "its arguments are asked",
            trigger: '.o_ai_chat_prompt_form:contains("Write a greeting")',
        },
        contrastChecked("a prompt's arguments"),
        {
            content: "sending without the required one says so",
            trigger: ".o_ai_chat_prompt_form .o_ai_chat_prompt_send",
            run: "click",
        },
        {trigger: ".o_ai_chat_prompt_form .o_ai_chat_prompt_problems li"},
        {
            content: "fill in the name",
            trigger: '.o_ai_chat_prompt_form input[id$="name"]',
            run: "edit Ada",
        },
        {trigger: ".o_ai_chat_prompt_form .o_ai_chat_prompt_send", run: "click"},
        {
            content: "the prompt is the user's message",
            trigger: '.o_ai_chat_message_user:contains("Write a warm greeting for Ada.")',
        },
        {
            content: "and the answer streams",
            trigger:
                '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("You asked: Write a warm greeting for Ada.")',
        },
        {
            trigger:
                '.o_ai_chat[data-status="idle"]:not(:has(.o_ai_chat_prompt_form)) .o_ai_chat_send',
        },
    ],
});
