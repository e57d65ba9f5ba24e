/** @odoo-module */
import {Component, onMounted, useRef, useState} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

import {matchPrompts, moveIndex, slashQuery} from "@ai_mcp/composer/logic/prompt_menu";
import {attachment, composeMessage} from "@ai_mcp/composer/logic/resource_attach";
import {PromptForm} from "./prompt_form/prompt_form";
import {PromptMenu} from "./prompt_menu/prompt_menu";
import {ResourcePicker} from "./resource_picker/resource_picker";

/**
 * Where the user writes. Enter sends, Shift+Enter starts a new line (and Enter while an input
 * method composes a character does neither). While an answer streams, the send button becomes a
 * stop button. A message that starts with "/" searches the prompts of the assistant's servers
 * (arrow keys, Enter or Tab to pick, Escape to write a message after all); a picked prompt asks its
 * arguments, then `onPrompt(prompt, values)` sends it and resolves to an error text, if any; as the
 * user types an argument, `onComplete(prompt, argument, value, context)` gives the server's suggestions.
 * The paperclip attaches resources of the conversation's servers (`resourceSource`): shown as chips,
 * their text goes with the message (resource_attach.js composeMessage).
 */
export class Composer extends Component {
    static template = "ai_mcp.Composer";
    static components = {PromptForm, PromptMenu, ResourcePicker};
    static props = {
        canSend: Boolean,
        streaming: Boolean,
        placeholder: {type: String, optional: true},
        onSend: Function,
        onStop: Function,
        prompts: {type: Array, optional: true},
        promptsLoading: {type: Boolean, optional: true},
        onPromptSearch: {type: Function, optional: true},
        onPrompt: {type: Function, optional: true},
        onComplete: {type: Function, optional: true},
        resourceSource: {type: Object, optional: true},
    };

    setup() {
        this.state = useState({
            text: "",
            menuIndex: 0,
            dismissed: null,
            picked: null,
            picking: false,
            attachments: [],
        });
        this.textarea = useRef("textarea");
        // whether the text was a "/" search at the last keystroke: the prompts are fetched as one starts
        this.searching = false;
        onMounted(() => this.textarea.el?.focus());
    }

    get placeholderText() {
        if (this.props.placeholder) {
            return this.props.placeholder;
        }
        return this.props.onPrompt
            ? _t(
                  "Ask the assistant… (Enter to send, Shift+Enter for a new line, / for the servers' prompts)"
              )
            : _t("Ask the assistant… (Enter to send, Shift+Enter for a new line)");
    }

    get sendDisabled() {
        return !this.props.canSend || (!this.state.text.trim() && !this.state.attachments.length);
    }

    get menuOpen() {
        return (
            Boolean(this.props.onPrompt) &&
            !this.state.picked &&
            this.state.dismissed !== this.state.text &&
            slashQuery(this.state.text) !== null
        );
    }

    get matches() {
        return matchPrompts(this.props.prompts || [], slashQuery(this.state.text) ?? "");
    }

    onInput() {
        this.state.menuIndex = 0;
        const searching = slashQuery(this.state.text) !== null;
        if (searching && !this.searching) {
            this.props.onPromptSearch?.();
        }
        this.searching = searching;
    }

    onKeydown(ev) {
        if (this.menuOpen && this.onMenuKey(ev)) {
            ev.preventDefault();
            return;
        }
        if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing && ev.keyCode !== 229) {
            ev.preventDefault();
            this.send();
        }
    }

    send() {
        if (this.sendDisabled) {
            return;
        }
        const text = composeMessage(this.state.text, this.state.attachments);
        this.state.text = "";
        this.state.attachments = [];
        if (this.textarea.el) {
            // t-model writes the DOM only when the value it rendered last changes: typed text that was
            // never rendered would stay in the box.
            this.textarea.el.value = "";
            this.textarea.el.focus();
        }
        this.props.onSend(text);
    }

    /** Whether the key was the menu's: arrows move, Enter and Tab pick, Escape closes it. */
    onMenuKey(ev) {
        const matches = this.matches;
        if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
            this.state.menuIndex = moveIndex(
                this.state.menuIndex,
                ev.key === "ArrowDown" ? 1 : -1,
                matches.length
            );
            return true;
        }
        if (
            (ev.key === "Enter" || ev.key === "Tab") &&
            !ev.shiftKey &&
            !ev.isComposing &&
            matches.length
        ) {
            this.pick(matches[Math.min(this.state.menuIndex, matches.length - 1)]);
            return true;
        }
        if (ev.key === "Escape") {
            this.state.dismissed = this.state.text;
            return true;
        }
        return false;
    }

    pick(prompt) {
        this.state.picked = prompt;
        this.state.text = "";
        if (this.textarea.el) {
            this.textarea.el.value = "";
        }
    }

    async sendPrompt(values) {
        const error = await this.props.onPrompt(this.state.picked, values);
        if (!error) {
            this.closePrompt();
        }
        return error;
    }

    closePrompt() {
        this.state.picked = null;
        this.textarea.el?.focus();
    }

    attach(read) {
        const chip = attachment(read);
        this.state.attachments = [
            ...this.state.attachments.filter((a) => a.key !== chip.key),
            chip,
        ];
        this.state.picking = false;
        this.textarea.el?.focus();
    }

    detach(key) {
        this.state.attachments = this.state.attachments.filter((a) => a.key !== key);
    }

    chipLabel(chip) {
        return chip.text === null
            ? _t("%(uri)s (%(bytes)s bytes, not sent: binary)", {uri: chip.uri, bytes: chip.size})
            : _t("%(uri)s (%(chars)s characters)", {uri: chip.uri, chars: chip.size});
    }

    stop() {
        this.props.onStop();
        this.textarea.el?.focus();
    }
}
