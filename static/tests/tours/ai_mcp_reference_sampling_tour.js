/** @odoo-module */
/**
 * MCP's reference server asks for a completion (tests/test_sampling_tour.py
 * TestReferenceServerSamplingTour: the model calls server-everything's `trigger-sampling-request`):
 * the card shows the server and its instructions, the user approves, the block shows the model's
 * answer, and the tool's result, opened, is that answer as the server got it.
 */
import {registry} from "@web/core/registry";

const ASK = '.o_ai_chat_tool_block[data-tool="trigger-sampling-request"]';

registry.category("web_tour.tours").add("ai_mcp_reference_sampling_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Reference assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Reference assistant"))'},
        {
            content: "ask",
            trigger: ".o_ai_chat_composer_input",
            run: "edit Ask the reference server.",
        },
        {trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {
            content: "the card says the reference server asks the model",
            trigger: `${ASK} .o_ai_chat_sampling_asked_by:contains("Everything")`,
        },
        {
            content: "with its instructions and output cap",
            trigger: `${ASK} .o_ai_chat_sampling_system:contains("You are a helpful test server.")`,
        },
        {trigger: `${ASK} .o_ai_chat_sampling_max_tokens:value(50)`},
        {content: "approve", trigger: `${ASK} .o_ai_chat_sampling_approve`, run: "click"},
        {
            content: "the block shows what the model answered the server",
            trigger: `${ASK} .o_ai_chat_tool_sampled[data-action="accept"]:contains("Brussels.")`,
        },
        {
            content: "the answer follows",
            trigger:
                '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("The reference server has its answer.")',
        },
        {trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
        {content: "open the block", trigger: `${ASK} .o_ai_chat_tool_header`, run: "click"},
        {
            content: "the server's result holds the answer it got",
            trigger: `${ASK} .o_ai_chat_tool_body:contains("LLM sampling result"):contains("Brussels.")`,
        },
    ],
});
