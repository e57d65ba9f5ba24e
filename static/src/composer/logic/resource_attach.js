/** @odoo-module */
/**
 * Resources attached in the composer, as plain data: no Odoo, no DOM.
 *
 *   attachment(read)               -> a chip: {key, uri, server, mimeType, text, size} from
 *                                     /ai_mcp/resources/read's answer (size: characters of the
 *                                     text, or bytes of a binary)
 *   composeMessage(text, chips)    -> the user's message with each attached text after it, capped
 *   pickerEntries(servers, query)  -> the picker's rows: resources and templates that match
 */

import {base64Bytes} from "../../common/chat_view.js";
import {promptSchema} from "./prompt_menu.js";

export const ATTACHED_TEXT_LIMIT = 20000;
// the server refuses messages over 32,000 characters: the user's text keeps the rest
const ATTACHMENTS_BUDGET = 28000;
const MARKER = "\n[... truncated: {omitted} more characters not sent ...]";

/** One chip per read: its text parts joined; a binary is named with its size, never sent. */
export function attachment(read) {
    const contents = read.contents || [];
    const texts = contents.filter((c) => typeof c.text === "string").map((c) => c.text);
    const binary = contents.find((c) => typeof c.blob === "string");
    return {
        key: `${read.server}:${read.uri}`,
        uri: read.uri,
        server: read.server,
        mimeType: (contents[0] && contents[0].mime_type) || null,
        text: texts.length ? texts.join("\n") : null,
        size: texts.length ? texts.join("\n").length : (base64Bytes(binary?.blob) ?? 0),
    };
}

function cap(text, limit) {
    if (text.length <= limit) {
        return text;
    }
    return text.slice(0, limit) + MARKER.replace("{omitted}", String(text.length - limit));
}

/** The message the model reads: the user's words, then each attachment under a header naming it. */
export function composeMessage(text, chips) {
    let budget = ATTACHMENTS_BUDGET;
    const blocks = chips.map((chip) => {
        // no nested template literal: Odoo's asset minifier drops the space inside the inner one
        const type = chip.mimeType ? " (" + chip.mimeType + ")" : "";
        const head = "[Attached resource " + chip.uri + type + " from " + chip.server + "]";
        if (chip.text === null) {
            return `${head}\n[binary, ${chip.size} bytes: not included]`;
        }
        const body = cap(chip.text, Math.max(0, Math.min(ATTACHED_TEXT_LIMIT, budget)));
        budget -= Math.min(chip.text.length, ATTACHED_TEXT_LIMIT);
        return `${head}\n${body}`;
    });
    return [text.trim(), ...blocks].filter(Boolean).join("\n\n");
}

/** Resources, then templates, of every server, whose name, title, URI or description mentions the query. */
export function pickerEntries(servers, query) {
    const q = (query || "").trim().toLowerCase();
    const matches = (item, uri) =>
        !q ||
        [item.name, item.title, uri, item.description].some(
            (v) => typeof v === "string" && v.toLowerCase().includes(q)
        );
    const rows = [];
    for (const server of servers || []) {
        for (const resource of server.resources || []) {
            if (matches(resource, resource.uri)) {
                rows.push({
                    kind: "resource",
                    key: `${server.server_id}:${resource.uri}`,
                    serverId: server.server_id,
                    server: server.server,
                    ...resource,
                });
            }
        }
        for (const template of server.templates || []) {
            if (matches(template, template.uri_template)) {
                rows.push({
                    kind: "template",
                    key: `${server.server_id}:${template.uri_template}`,
                    serverId: server.server_id,
                    server: server.server,
                    // whether its server suggests values for its variables (/ai_mcp/complete)
                    completions: Boolean(server.completions),
                    ...template,
                });
            }
        }
    }
    return rows;
}

/** The schema form's schema for a template's variables: each a required text, as a prompt's required arguments. */
export function templateSchema(template) {
    return promptSchema({
        arguments: (template.variables || []).map((name) => ({name, required: true})),
    });
}
