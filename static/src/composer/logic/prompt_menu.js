/** @odoo-module */
/**
 * The composer's `/` menu of MCP prompts, as plain data: no Odoo, no DOM.
 *
 *   slashQuery(text)            -> what follows "/" while the text is a slash command, else null
 *   matchPrompts(prompts, q)    -> the prompts that match, best first
 *   promptSchema(prompt)        -> a JSON Schema of its arguments, for the schema form
 *   moveIndex(index, delta, n)  -> the highlighted row after an arrow key, wrapping around
 */

const MAX_SHOWN = 20;

/** "/gree" -> "gree"; "/" -> ""; anything else (no leading "/", a space or a new line) -> null. */
export function slashQuery(text) {
    if (typeof text !== "string" || !text.startsWith("/")) {
        return null;
    }
    const query = text.slice(1);
    return /\s/.test(query) ? null : query;
}

function rank(prompt, query) {
    const name = prompt.name.toLowerCase();
    const title = (prompt.title || "").toLowerCase();
    if (name.startsWith(query) || title.startsWith(query)) {
        return 0;
    }
    if (name.includes(query) || title.includes(query)) {
        return 1;
    }
    if (
        (prompt.description || "").toLowerCase().includes(query) ||
        (prompt.server || "").toLowerCase().includes(query)
    ) {
        return 2;
    }
    return null;
}

/** Prompts whose name or title starts with the query first, then those that contain it, then
 * those whose description or server mentions it; in the order the servers gave them within each. */
export function matchPrompts(prompts, query, limit = MAX_SHOWN) {
    const q = (query || "").toLowerCase();
    return prompts
        .map((prompt, order) => ({prompt, order, rank: rank(prompt, q)}))
        .filter((entry) => entry.rank !== null)
        .sort((a, b) => a.rank - b.rank || a.order - b.order)
        .slice(0, limit)
        .map((entry) => entry.prompt);
}

/** MCP prompt arguments are strings; required ones must not be empty. */
export function promptSchema(prompt) {
    const properties = {};
    const required = [];
    for (const argument of prompt.arguments || []) {
        properties[argument.name] = {type: "string", title: argument.name};
        if (argument.description) {
            properties[argument.name].description = argument.description;
        }
        if (argument.required) {
            properties[argument.name].minLength = 1;
            required.push(argument.name);
        }
    }
    return {type: "object", properties, required};
}

export function moveIndex(index, delta, count) {
    if (!count) {
        return 0;
    }
    return (((index + delta) % count) + count) % count;
}
