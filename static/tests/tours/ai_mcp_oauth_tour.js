/** @odoo-module */
/**
 * A user who has not signed in to an OAuth server asks something that needs it
 * (tests/test_oauth_sign_in.py TestOAuthSignIn): the answer pauses with a sign-in card; the user
 * signs in (the browser follows Odoo's sign-in link through the provider back to Odoo's callback,
 * as the card's tab does) and the answer goes on as that user. A call that needs a wider
 * permission asks again, and "Continue without" gets the answer without the server.
 */
import {registry} from "@web/core/registry";

registry.category("web_tour.tours").add("ai_mcp_oauth_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Helper",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Helper"))'},
        {
            content: "ask something that needs Notes",
            trigger: ".o_ai_chat_composer_input",
            run: "edit Who am I on Notes?",
        },
        {trigger: ".o_ai_chat_send", run: "click"},
        {
            content: "the answer pauses with a sign-in card",
            trigger:
                '.o_ai_chat[data-status="awaiting_auth"] .o_ai_mcp_sign_in_card[data-outcome="pending"] .o_ai_mcp_sign_in_button:contains("Sign in to Notes")',
        },
        {
            content: "sign in, in this browser, through the provider and back to Odoo's callback",
            trigger: ".o_ai_mcp_sign_in_card[data-server-id]",
            async run() {
                const serverId = document.querySelector(".o_ai_mcp_sign_in_card").dataset.serverId;
                await fetch("/ai_mcp/oauth/start?server_id=" + serverId, {
                    credentials: "include",
                    mode: "no-cors",
                });
                // the tab's bus notice may already have resumed the answer; otherwise, say so by hand
                document.querySelector(".o_ai_mcp_sign_in_done")?.click();
            },
        },
        {
            content: "the call ran as this user",
            trigger: '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("You are bob.")',
        },
        {
            trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_composer_input',
            run: "edit Show the admin report",
        },
        {trigger: ".o_ai_chat_send", run: "click"},
        {
            content: "a wider permission is asked for",
            trigger:
                '.o_ai_mcp_sign_in_card[data-outcome="pending"] .o_ai_mcp_sign_in_button:contains("Sign in again to Notes")',
        },
        {
            content: "go on without Notes",
            trigger: '.o_ai_mcp_sign_in_card[data-outcome="pending"] .o_ai_mcp_sign_in_decline',
            run: "click",
        },
        {
            content: "the answer comes without it",
            trigger:
                '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("I answer without Notes.")',
        },
        {trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
    ],
});
