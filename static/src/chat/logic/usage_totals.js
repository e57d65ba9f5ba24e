/** @odoo-module */
/**
 * What the chat shows of the tokens and their cost: the open conversation's totals and the user's
 * month (route /ai_mcp/chat/usage, ai.usage `_chat_totals`), read again when a conversation is
 * opened and when a turn ends. `UsageTotals` keeps them in a state of its own (OWL's `reactive`
 * through the store's services); `usageLine` words them: "1,234 tokens · $0.02", the cost only when
 * the models have prices.
 */

const SEPARATOR = " · ";

/**
 * `totals` ({tokens, costs: [{amount, currency: {code, symbol, position, digits}}]}) as one short
 * line in `locale`; `words.tokens(count)` says "1,234 tokens" in the user's language. "" when
 * nothing was used.
 */
export function usageLine(totals, locale, words) {
    if (!totals || !totals.tokens) {
        return "";
    }
    const count = new Intl.NumberFormat(locale).format(totals.tokens);
    const costs = (totals.costs || []).filter((cost) => cost.amount > 0);
    return [words.tokens(count), ...costs.map((cost) => formatCost(cost, locale))].join(SEPARATOR);
}

/**
 * An amount in its currency. Below the currency's smallest unit (a few rounds of a cheap model cost
 * a fraction of a cent) it keeps two significant digits instead of showing nothing.
 */
export function formatCost({amount, currency}, locale) {
    const digits = currency.digits ?? 2;
    const tiny = amount < 10 ** -digits;
    const number = tiny
        ? {maximumSignificantDigits: 2}
        : {minimumFractionDigits: digits, maximumFractionDigits: digits};
    try {
        return new Intl.NumberFormat(locale, {
            style: "currency",
            currency: currency.code,
            currencyDisplay: "narrowSymbol",
            ...number,
        }).format(amount);
    } catch {
        // a currency code Intl does not know: the symbol where the currency puts it
        const text = new Intl.NumberFormat(locale, number).format(amount);
        return currency.position === "after"
            ? `${text} ${currency.symbol}`
            : `${currency.symbol}${text}`;
    }
}

/**
 * The totals of the store's open conversation and of the user's month, read on the events that
 * change them: a conversation opened (or a new chat) and a turn that ended (done, or an error after
 * which the model calls made are counted all the same).
 */
export class UsageTotals {
    constructor(store) {
        this.store = store;
        const reactive = store.services.reactive || ((object) => object);
        this.state = reactive({conversation: null, month: null});
        this.conversationId = store.chat.conversationId;
        this.asked = 0; // the answer of the last request only is shown
        this.unsubscribe = store.subscribe((chat, event) => this.heard(chat, event));
    }

    heard(chat, event) {
        const opened = chat.conversationId !== this.conversationId;
        const ended = event && ["done", "error"].includes(event.type);
        if (opened || ended) {
            this.conversationId = chat.conversationId;
            this.refresh();
        }
    }

    /** The chat has opened (chat_turns.js `start`): the totals are read, unless opening its
     * conversation read them already. */
    opened() {
        if (!this.asked) {
            this.refresh();
        }
    }

    async refresh() {
        const asked = ++this.asked;
        const conversationId = this.store.chat.conversationId;
        let totals;
        try {
            totals = await this.store.services.rpc(
                "/ai_mcp/chat/usage",
                conversationId ? {conversation_id: conversationId} : {},
                {silent: true}
            );
        } catch {
            return; // read again after the next turn
        }
        if (asked !== this.asked || !this.store.alive) {
            return;
        }
        this.state.conversation = totals.conversation;
        this.state.month = totals.month;
    }

    dispose() {
        this.unsubscribe();
    }
}
