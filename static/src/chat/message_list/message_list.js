/** @odoo-module */
import {Component, markup} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

import {clickedRecord} from "@ai_mcp/common/chat_view";
import {renderMarkdown} from "@ai_mcp/chat/logic/markdown";
import {SearchBlock} from "../search_block/search_block";
import {ThinkingBlock} from "../thinking_block/thinking_block";
import {ToolBlock} from "../tool_block/tool_block";

/**
 * The conversation's messages (chat_state.js `messages`): the user's as plain text (with the app
 * that sent it, when an app did), the assistant's answers as their parts in stream order, text as
 * safe markdown, shown reasoning as ThinkingBlocks, tool calls as ToolBlocks and the model's tool
 * searches as SearchBlocks. renderMarkdown escapes every character of the model's text, so its
 * output is the only HTML marked safe here. A click on a link to a record opens its form in the web
 * client (`env.aiMcpOpenRecord`, the chat action's), as Discuss opens the records its messages name.
 */
export class MessageList extends Component {
    static template = "ai_mcp.MessageList";
    static components = {SearchBlock, ThinkingBlock, ToolBlock};
    static props = {
        messages: Array,
        paused: {type: Boolean, optional: true},
        onToggleTool: Function,
        onCancelTool: {type: Function, optional: true},
        onAnswerTool: {type: Function, optional: true},
        onOpenResource: {type: Function, optional: true},
        conversationId: {type: [Number, {value: null}], optional: true},
        store: Object, // the chat's store and its turns, for the apps of tool calls
        turns: Object,
    };

    markdown(text) {
        return markup(renderMarkdown(text));
    }

    onTextClick(ev) {
        const record = clickedRecord(ev);
        if (record && this.env.aiMcpOpenRecord) {
            ev.preventDefault();
            this.env.aiMcpOpenRecord(record);
        }
    }

    viaApp(message) {
        // a _t() within another's arguments is not found by Odoo's string exporter
        const app = message.app.title || _t("an app");
        return _t("via %(app)s", {app});
    }

    partKey(part, index) {
        return part.kind === "tool" || part.kind === "search"
            ? `${part.kind}:${part.key}`
            : `${part.kind}:${index}`;
    }
}
