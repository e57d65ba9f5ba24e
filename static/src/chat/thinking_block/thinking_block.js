/** @odoo-module */
import {Component} from "@odoo/owl";

/**
 * Reasoning the model showed while answering (chat_state.js `thinking` parts), collapsed under
 * "Thinking": a native <details>, so opening it needs no state and survives re-renders. Shown as
 * plain text: it is the model's own words, not markdown it meant to format.
 */
export class ThinkingBlock extends Component {
    static template = "ai_mcp.ThinkingBlock";
    static props = {text: String};
}
