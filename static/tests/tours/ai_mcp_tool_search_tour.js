/** @odoo-module */
/**
 * An assistant with more tools than it offers up front (tests/test_chat_tour.py TestToolSearchTour):
 * the model searches its tools, then calls the one it found. The search shows as a small block
 * before the call's block, and again once the page is reloaded, rebuilt from the stored history.
 */
import {registry} from "@web/core/registry";
import {contrastChecked} from "./contrast";
import {unloadsPage} from "./series";

const searchBlock =
    '.o_ai_chat_search_block[data-query="echo text back"]:contains("Searched tools: echo text back → ")';

function searchedThenCalled() {
    return [
        {
            content: "the search shows as a small block, with the tool found",
            trigger: `${searchBlock}:contains("found"):contains("echo (Tour server)")`,
        },
        {
            content: "the call of the tool found comes after it, as any call",
            trigger: `${searchBlock} ~ .o_ai_chat_tool_block[data-tool="echo"]`,
        },
        {
            content: "the answer",
            trigger: '.o_ai_chat_message_assistant:contains("The echo said hi.")',
        },
    ];
}

registry.category("web_tour.tours").add("ai_mcp_tool_search_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Search assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Search assistant"))'},
        {
            content: "ask for something a tool does",
            trigger: ".o_ai_chat_composer_input",
            run: "edit Echo hi",
        },
        {trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        ...searchedThenCalled(),
        {trigger: '.o_ai_chat[data-status="idle"]'},
        contrastChecked("a tool search's block"),
        unloadsPage({
            content: "reload the page",
            trigger: '.o_ai_chat_conversation.active:contains("Echo hi")',
            run() {
                window.location.reload();
            },
        }),
        {
            content: "the conversation is open again",
            trigger: '.o_ai_chat_message_user:contains("Echo hi")',
        },
        ...searchedThenCalled(),
    ],
});
