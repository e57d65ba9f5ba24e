/** @odoo-module */
/**
 * The AI Assistant as a user meets it, against the scripted LLM and a real MCP server
 * (tests/test_chat_tour.py scripts both, with the assistant limited to 2 rounds and `echo`
 * requiring approval):
 * ask, watch the `add` call run and finish, open its block, say "go on" at the round limit,
 * allow the `echo` call in the approval dialog, read the answer and the tokens it used in the header,
 * then reload the page and find the same conversation with the same blocks, rebuilt from its stored
 * history.
 */
import {registry} from "@web/core/registry";
import {unloadsPage} from "./series";

const ANSWER = ".o_ai_chat_message_assistant .o_ai_chat_markdown";

function finishedChat() {
    return [
        {
            content: "the add block, finished",
            trigger: '.o_ai_chat_tool_block[data-tool="add"][data-status="done"]',
        },
        {
            content: "the echo block, finished",
            trigger: '.o_ai_chat_tool_block[data-tool="echo"][data-status="done"]',
        },
        {
            content: "blocks in call order",
            trigger:
                '.o_ai_chat_tool_block[data-tool="add"] ~ .o_ai_chat_tool_block[data-tool="echo"]',
        },
        {content: "the answer, as markdown", trigger: `${ANSWER} strong:contains("2 + 3 = 5")`},
        {content: "the turn is over", trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
        {
            content: "the header shows what the conversation used, and the user's month",
            trigger: '.o_ai_chat_header .o_ai_usage_conversation:contains("tokens")',
        },
        {trigger: '.o_ai_chat_header .o_ai_usage_month:contains("This month:")'},
    ];
}

registry.category("web_tour.tours").add("ai_mcp_chat_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Tour assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Tour assistant"))'},
        {
            content: "write a question",
            trigger: ".o_ai_chat_composer_input",
            run: "edit What is 2 + 3? Then echo hello.",
        },
        {content: "Enter sends it", trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {
            content: "the question is shown",
            trigger: '.o_ai_chat_message_user:contains("What is 2 + 3?")',
        },

        // round 1: add runs without approval
        {
            content: "the add call appears and finishes",
            trigger: '.o_ai_chat_tool_block[data-tool="add"][data-status="done"]',
        },
        {
            trigger:
                '.o_ai_chat_tool_block[data-tool="add"] .o_ai_chat_tool_server:contains("Tour server")',
        },
        {trigger: '.o_ai_chat_tool_block[data-tool="add"] .o_ai_chat_tool_duration'},
        // the round limit: "continue?" comes at once; closing it answers nothing
        {
            content: "the round limit asks whether to go on",
            trigger: '.modal .modal-title:contains("Continue?")',
        },
        {trigger: '.modal .modal-body:contains("1 of its 2 rounds")'},
        {content: "close the dialog without answering", trigger: ".modal .btn-close", run: "click"},
        {trigger: "body:not(:has(.modal))"},
        {
            content: "the chat says it waits",
            trigger: '.o_ai_chat[data-status="awaiting_confirmation"] .o_ai_chat_pause',
        },
        {
            content: "expand the add block",
            trigger: '.o_ai_chat_tool_block[data-tool="add"] .o_ai_chat_tool_header',
            run: "click",
        },
        {
            content: "its arguments as JSON",
            trigger: `.o_ai_chat_tool_block[data-tool="add"] .o_ai_chat_tool_arguments:contains('"a": 2')`,
        },
        {
            content: "its result",
            trigger: '.o_ai_chat_tool_block[data-tool="add"] .o_ai_chat_tool_result:contains("5")',
        },
        {
            content: "open the question again",
            trigger: ".o_ai_chat_pause .o_ai_chat_review",
            run: "click",
        },
        {content: "go on", trigger: '.modal-footer button:contains("Go on")', run: "click"},

        // round 2: echo needs approval
        {
            content: "the approval dialog lists the echo call",
            trigger: '.o_ai_chat_approval_dialog .o_ai_chat_approval_call[data-tool="echo"]',
        },
        {
            trigger:
                '.o_ai_chat_approval_dialog [data-tool="echo"] .o_ai_chat_approval_arguments:contains("hello from the tour")',
        },
        {content: "nothing to send before deciding", trigger: ".o_ai_chat_approval_send:disabled"},
        {
            content: "allow echo",
            trigger: '.o_ai_chat_approval_dialog [data-tool="echo"] .o_ai_chat_allow',
            run: "click",
        },
        {content: "send the decision", trigger: ".o_ai_chat_approval_send:enabled", run: "click"},
        {trigger: "body:not(:has(.modal))"},
        ...finishedChat(),
        {
            content: "expand the echo block",
            trigger: '.o_ai_chat_tool_block[data-tool="echo"] .o_ai_chat_tool_header',
            run: "click",
        },
        {
            trigger:
                '.o_ai_chat_tool_block[data-tool="echo"] .o_ai_chat_tool_result:contains("hello from the tour")',
        },
        {
            content: "the conversation is listed",
            trigger: '.o_ai_chat_conversation.active:contains("What is 2 + 3?")',
        },

        // reload: the same conversation, rebuilt from its history
        unloadsPage({
            content: "reload the page",
            trigger: ".o_ai_chat_conversation.active",
            run() {
                window.location.reload();
            },
        }),
        {
            content: "the conversation is open again",
            trigger: '.o_ai_chat_message_user:contains("What is 2 + 3?")',
        },
        ...finishedChat(),
        {
            content: "blocks start collapsed",
            trigger: '.o_ai_chat_tool_block[data-tool="add"]:not(.o_expanded)',
        },
        {
            content: "expand add again",
            trigger: '.o_ai_chat_tool_block[data-tool="add"] .o_ai_chat_tool_header',
            run: "click",
        },
        {trigger: '.o_ai_chat_tool_block[data-tool="add"] .o_ai_chat_tool_result:contains("5")'},
        {content: "no dialog comes back for answered pauses", trigger: "body:not(:has(.modal))"},
    ],
});
