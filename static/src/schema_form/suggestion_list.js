/** @odoo-module */
import {Component, useState} from "@odoo/owl";

/**
 * The server's suggestions under a text input of the schema form, in the look of Odoo's
 * autocomplete. `completer` keeps the list (composer/logic/field_completer.js: `state` made with
 * OWL's `reactive`, so that this list follows it); `field` is the input's, whose list shows.
 * A suggestion is picked with the mouse without the input losing focus.
 */
export class SuggestionList extends Component {
    static template = "ai_mcp.SuggestionList";
    static props = {completer: Object, field: String, inputId: String, onPick: Function};

    setup() {
        this.state = useState(this.props.completer.state);
    }

    get open() {
        return this.state.field === this.props.field && this.state.values.length > 0;
    }

    optionId(index) {
        return `${this.props.inputId}_suggestion_${index}`;
    }
}
