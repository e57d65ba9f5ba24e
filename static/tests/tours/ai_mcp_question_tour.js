/** @odoo-module */
/**
 * A server asks the user during a call (tests/test_chat_tour.py TestCallProgressTour: the model
 * calls `ask_preferences`, whose server elicits a name and a colour): the question shows as a form
 * in the call's block, the answer goes back to the server and its greeting comes back as the answer.
 */
import { registry } from "@web/core/registry";

const ASK = '.o_ai_chat_tool_block[data-tool="ask_preferences"]';
const REPORT = '.o_ai_chat_tool_block[data-tool="stock_report"]';

registry.category("web_tour.tours").add("ai_mcp_question_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        { content: "pick the assistant", trigger: ".o_ai_chat_assistant:enabled", run: "selectByLabel Progress assistant" },
        { trigger: '.o_ai_chat_assistant:has(option:selected:contains("Progress assistant"))' },
        { content: "ask to be greeted", trigger: ".o_ai_chat_composer_input", run: "edit Greet me." },
        { trigger: ".o_ai_chat_composer_input", run: "press Enter" },
        { content: "the server's question shows in its call", trigger: `${ASK} .o_ai_chat_question_message:contains("Who are you")` },
        { content: "with the tool's icon", trigger: `${ASK} img.o_ai_chat_tool_icon[src^="data:image/png"]` },
        { content: "write the name", trigger: `${ASK} .o_ai_chat_question_form input[type="text"]`, run: "edit Ada" },
        { content: "choose the colour", trigger: `${ASK} .o_ai_chat_question_form select`, run: "selectByLabel blue" },
        { content: "send the answer", trigger: `${ASK} .o_ai_chat_question_accept`, run: "click" },
        { content: "the question closes", trigger: `${ASK}[data-status="done"]:not(:has(.o_ai_chat_question))` },
        { content: "the server's greeting is the answer", trigger: '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("hello Ada, blue")' },
        { trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send' },
        // structured content that is neither a record nor a table folds as a tree
        { content: "ask for the stock report", trigger: ".o_ai_chat_composer_input", run: "edit Show the stock report." },
        { trigger: ".o_ai_chat_composer_input", run: "press Enter" },
        { trigger: `${REPORT}[data-status="done"] .o_ai_chat_tool_header`, run: "click" },
        { content: "the report is a tree", trigger: `${REPORT} .o_ai_chat_json_tree .o_ai_chat_json_key:contains("warehouse")` },
        { trigger: `${REPORT} .o_ai_chat_json_leaf:contains("checked"):contains("true")` },
        { trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send' },
    ],
});
