/** @odoo-module */
import {Component} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

/**
 * A tool search of the model (tool_search_block.js `searchBlock`): one line saying what it searched
 * and how many tools it found, then the tools found, each with its server.
 */
export class SearchBlock extends Component {
    static template = "ai_mcp.SearchBlock";
    static props = {block: Object};

    get summary() {
        const {query, found} = this.props.block;
        if (!found.length) {
            return _t("Searched tools: %(query)s → nothing found", {query});
        }
        return _t("Searched tools: %(query)s → %(count)s found", {query, count: found.length});
    }

    toolLabel(tool) {
        return _t("%(tool)s (%(server)s)", {tool: tool.title, server: tool.server});
    }
}
