/** @odoo-module */
/**
 * A server asks the user during a call (tests/test_chat_tour.py TestCallProgressTour: the model
 * calls `ask_preferences`, whose server elicits a name and a colour): the question shows as a form
 * in the call's block, the answer goes back to the server and its greeting comes back as the answer.
 * Then `ask_defaults` asks a form whose fields have defaults: they start filled in, and the form
 * sent untouched gives the server every one of them.
 */
import {registry} from "@web/core/registry";

import {contrastChecked} from "./contrast";

const ASK = '.o_ai_chat_tool_block[data-tool="ask_preferences"]';
const REPORT = '.o_ai_chat_tool_block[data-tool="stock_report"]';
const DEFAULTS = '.o_ai_chat_tool_block[data-tool="ask_defaults"]';
const FIELD = (path) =>
    `${DEFAULTS} .o_ai_chat_question_form .o_schema_form_node[data-path="${path}"]`;

registry.category("web_tour.tours").add("ai_mcp_question_tour", {
    url: "/odoo/action-ai_mcp.action_ai_chat",
    steps: () => [
        {
            content: "pick the assistant",
            trigger: ".o_ai_chat_assistant:enabled",
            run: "selectByLabel Progress assistant",
        },
        {trigger: '.o_ai_chat_assistant:has(option:selected:contains("Progress assistant"))'},
        {content: "ask to be greeted", trigger: ".o_ai_chat_composer_input", run: "edit Greet me."},
        {trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {
            content: "the server's question shows in its call",
            trigger: `${ASK} .o_ai_chat_question_message:contains("Who are you")`,
        },
        contrastChecked("a server's question"),
        {
            content: "with the tool's icon",
            trigger: `${ASK} img.o_ai_chat_tool_icon[src^="data:image/png"]`,
        },
        {
            content: "write the name",
            trigger: `${ASK} .o_ai_chat_question_form input[type="text"]`,
            run: "edit Ada",
        },
        {
            content: "choose the colour",
            trigger: `${ASK} .o_ai_chat_question_form select`,
            run: "selectByLabel blue",
        },
        {content: "send the answer", trigger: `${ASK} .o_ai_chat_question_accept`, run: "click"},
        {
            content: "the question closes",
            trigger: `${ASK}[data-status="done"]:not(:has(.o_ai_chat_question))`,
        },
        {
            content: "the server's greeting is the answer",
            trigger: '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("hello Ada, blue")',
        },
        {trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
        // structured content that is neither a record nor a table folds as a tree
        {
            content: "ask for the stock report",
            trigger: ".o_ai_chat_composer_input",
            run: "edit Show the stock report.",
        },
        {trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {trigger: `${REPORT}[data-status="done"] .o_ai_chat_tool_header`, run: "click"},
        {
            content: "the report is a tree",
            trigger: `${REPORT} .o_ai_chat_json_tree .o_ai_chat_json_key:contains("warehouse")`,
        },
        {trigger: `${REPORT} .o_ai_chat_json_leaf:contains("checked"):contains("true")`},
        contrastChecked("finished calls, their durations and a result's tree"),
        {trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
        // a question whose fields have defaults
        {
            content: "ask to check the order",
            trigger: ".o_ai_chat_composer_input",
            run: "edit Check my order.",
        },
        {trigger: ".o_ai_chat_composer_input", run: "press Enter"},
        {
            content: "the text starts with its default",
            trigger: `${FIELD("note")} input:value("leave at the door")`,
        },
        {content: "the number too", trigger: `${FIELD("ratio")} input:value("3.14")`},
        {
            content: "the choice too",
            trigger: `${FIELD("color")} select:has(option:selected:contains("green"))`,
        },
        {
            content: "by its title",
            trigger: `${FIELD("size")} select:has(option:selected:contains("Large"))`,
        },
        {
            content: "send it untouched",
            trigger: `${DEFAULTS} .o_ai_chat_question_accept`,
            run: "click",
        },
        {
            content: "the question closes",
            trigger: `${DEFAULTS}[data-status="done"]:not(:has(.o_ai_chat_question))`,
        },
        {trigger: '.o_ai_chat_message_assistant .o_ai_chat_markdown:contains("leave at the door")'},
        {trigger: '.o_ai_chat[data-status="idle"] .o_ai_chat_send'},
    ],
});
