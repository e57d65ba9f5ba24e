/** @odoo-module */
import { Component, onMounted, useRef, useState } from "@odoo/owl";
import { _t } from "@web/core/l10n/translation";

/**
 * Where the user writes. Enter sends, Shift+Enter starts a new line (and Enter while an input
 * method composes a character does neither). While an answer streams, the send button becomes a
 * stop button.
 */
export class Composer extends Component {
    static template = "ai_mcp.Composer";
    static props = {
        canSend: Boolean,
        streaming: Boolean,
        placeholder: { type: String, optional: true },
        onSend: Function,
        onStop: Function,
    };

    setup() {
        this.state = useState({ text: "" });
        this.textarea = useRef("textarea");
        onMounted(() => this.textarea.el?.focus());
    }

    get placeholderText() {
        return this.props.placeholder || _t("Ask the assistant… (Enter to send, Shift+Enter for a new line)");
    }

    get sendDisabled() {
        return !this.props.canSend || !this.state.text.trim();
    }

    onKeydown(ev) {
        if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing && ev.keyCode !== 229) {
            ev.preventDefault();
            this.send();
        }
    }

    send() {
        if (this.sendDisabled) {
            return;
        }
        const text = this.state.text;
        this.state.text = "";
        if (this.textarea.el) {
            // t-model writes the DOM only when the value it rendered last changes: typed text that was
            // never rendered would stay in the box.
            this.textarea.el.value = "";
            this.textarea.el.focus();
        }
        this.props.onSend(text);
    }

    stop() {
        this.props.onStop();
        this.textarea.el?.focus();
    }
}
