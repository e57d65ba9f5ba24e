/** @odoo-module */
/**
 * A server asks the assistant's model for a completion (tests/test_sampling_tour.py: the model
 * calls `ask_model`, whose server asks "Capital of France?"): the card in the call's block shows
 * the server, the message and the output cap; the user changes the question and the cap, approves,
 * and the block shows what the model answered the server.
 */
import {registry} from "@web/core/registry";

import {contrastChecked} from "./contrast";

const ASK = '.o_ai_chat_tool_block[data-tool="ask_model"]';

registry.category("web_tour.tours").add("ai_mcp_sampling_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Sampling assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Sampling assistant"))'},
        {content: "start a quiz", trigger: ".o_ai_chat_composer_input", run: "edit Quiz me."},
        {trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {
            content: "the card says which server asks the model",
            trigger: `${ASK} .o_ai_chat_sampling_asked_by:contains("Tour server")`,
        },
        {
            content: "with its instructions",
            trigger: `${ASK} .o_ai_chat_sampling_system:contains("Answer in one short sentence.")`,
        },
        {
            content: "and its output cap",
            trigger: `${ASK} .o_ai_chat_sampling_max_tokens:value(200)`,
        },
        contrastChecked("a server's request for the model"),
        {
            content: "change the question",
            trigger: `${ASK} .o_ai_chat_sampling_message textarea`,
            run: "edit Capital of Belgium?",
        },
        {
            content: "lower the cap",
            trigger: `${ASK} .o_ai_chat_sampling_max_tokens`,
            run: "edit 50",
        },
        {content: "approve", trigger: `${ASK} .o_ai_chat_sampling_approve`, run: "click"},
        {
            content: "the block shows what the model answered the server",
            trigger: `${ASK} .o_ai_chat_tool_sampled[data-action="accept"]:contains("Brussels.")`,
        },
        {
            content: "and the server's result is the answer",
            trigger:
                '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("scripted-model said: Brussels.")',
        },
        {trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
    ],
});
