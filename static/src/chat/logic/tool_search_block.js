/** @odoo-module */
/**
 * A tool search of the model (the `tool_search` event, docs/events.md) as a part of the turn's
 * answer: what it searched and what it found, shown as a small block ("Searched tools: invoice →
 * 3 found") with the tools found. The search runs on the server, within the turn; the block only
 * reports it.
 */

/** The answer's part for a `tool_search` event; `messageIndex` makes its key unique in the conversation. */
export function searchBlock(event, messageIndex) {
    return {
        kind: "search",
        key: `${messageIndex}:${event.id}`,
        id: event.id,
        query: event.query,
        round: event.round ?? null,
        found: (event.found ?? []).map((tool) => ({
            name: tool.name,
            tool: tool.tool,
            title: tool.title,
            server: tool.server,
        })),
    };
}
