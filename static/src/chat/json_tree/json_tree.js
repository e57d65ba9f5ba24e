/** @odoo-module */
import {Component} from "@odoo/owl";

/** Objects and arrays deeper than this start folded. */
const OPEN_LEVELS = 2;

/**
 * A JSON value as a tree whose objects and arrays fold (`details`), for structured results that
 * are not a record or a table. Everything is escaped by t-esc.
 */
export class JsonTree extends Component {
    static template = "ai_mcp.JsonTree";
    static props = {
        value: {optional: true},
        name: {type: String, optional: true},
        depth: {type: Number, optional: true},
    };
    static defaultProps = {depth: 0};

    get isBranch() {
        return this.props.value !== null && typeof this.props.value === "object";
    }

    get entries() {
        const value = this.props.value;
        return Array.isArray(value)
            ? value.map((item, index) => [String(index), item])
            : Object.entries(value);
    }

    get summary() {
        const count = this.entries.length;
        return Array.isArray(this.props.value) ? `[${count}]` : `{${count}}`;
    }

    get open() {
        return this.props.depth < OPEN_LEVELS;
    }

    get scalar() {
        return JSON.stringify(this.props.value) ?? String(this.props.value);
    }
}
JsonTree.components = {JsonTree};
