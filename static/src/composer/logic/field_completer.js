/** @odoo-module */
/**
 * The server's suggestions for the fields of one form (a prompt's arguments, a resource template's
 * values) as the user types, as plain data: no Odoo, no DOM.
 *
 *   typed(field, value)   the user typed: the server is asked once they paused (COMPLETION_DELAY_MS)
 *   keydown(field, key)   arrows move through the list, Enter or Tab picks, Escape closes:
 *                         {handled, value?}, `value` being the suggestion picked
 *   pick(index)           the suggestion at `index`, the list closed
 *   close()               no list, and what is on its way is dropped
 *
 * `ask(field, value, context)` resolves to {values}; `context()` gives the form's values already
 * filled in. An answer that comes after a newer keystroke is dropped: only the last one shows. A
 * form whose server does not complete (`enabled` false) asks nothing. `state` is made with
 * `reactive` (OWL's in the widget): {field whose list is open or null, values, index highlighted}.
 */
import {moveIndex} from "./prompt_menu.js";

export const COMPLETION_DELAY_MS = 250;

export class FieldCompleter {
    constructor({
        ask,
        context = () => ({}),
        enabled = true,
        delay = COMPLETION_DELAY_MS,
        timers = globalThis,
        reactive = (object) => object,
    }) {
        this.ask = ask;
        this.context = context;
        this.enabled = enabled;
        this.delay = delay;
        this.timers = timers;
        this.state = reactive({field: null, values: [], index: -1});
        // bumped by every keystroke and close: an answer asked under an older one is stale
        this.generation = 0;
        this.timer = null;
    }

    typed(field, value) {
        if (!this.enabled) {
            return;
        }
        this.close();
        const generation = this.generation;
        this.timer = this.timers.setTimeout(() => {
            this.timer = null;
            this.fetch(generation, field, value);
        }, this.delay);
    }

    async fetch(generation, field, value) {
        let values = [];
        try {
            const answer = await this.ask(field, value, this.context());
            values = (answer && answer.values) || [];
        } catch {
            // a suggestion is a convenience: none rather than an error
        }
        if (generation !== this.generation) {
            return;
        }
        values = values.filter((v) => typeof v === "string" && v !== value);
        Object.assign(this.state, {field: values.length ? field : null, values, index: -1});
    }

    keydown(field, key) {
        if (this.state.field !== field || !this.state.values.length) {
            return {handled: false};
        }
        const count = this.state.values.length;
        switch (key) {
            case "ArrowDown":
                this.state.index = this.state.index < 0 ? 0 : moveIndex(this.state.index, 1, count);
                return {handled: true};
            case "ArrowUp":
                this.state.index =
                    this.state.index < 0 ? count - 1 : moveIndex(this.state.index, -1, count);
                return {handled: true};
            case "Enter":
            case "Tab":
                if (this.state.index < 0) {
                    return {handled: false};
                }
                return {handled: true, value: this.pick(this.state.index)};
            case "Escape":
                this.close();
                return {handled: true};
            default:
                return {handled: false};
        }
    }

    pick(index) {
        const value = this.state.field === null ? undefined : this.state.values[index];
        this.close();
        return value;
    }

    close() {
        this.generation += 1;
        if (this.timer !== null) {
            this.timers.clearTimeout(this.timer);
            this.timer = null;
        }
        if (this.state.field !== null || this.state.values.length) {
            Object.assign(this.state, {field: null, values: [], index: -1});
        }
    }
}
