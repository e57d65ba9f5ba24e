/** @odoo-module */
import {Component} from "@odoo/owl";

/**
 * The prompts that match what follows "/" in the composer; the composer owns the highlighted row
 * (arrow keys) and what picking one does.
 */
export class PromptMenu extends Component {
    static template = "ai_mcp.PromptMenu";
    static props = {prompts: Array, activeIndex: Number, loading: Boolean, onPick: Function};
}
