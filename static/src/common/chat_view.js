/** @odoo-module */
import {ChatStatus} from "./chat_status.js";
import {recordLink} from "./record_link.js";
/**
 * What the chat components show of the reducer's state (chat_state.js), as plain functions with no
 * Odoo import, tested by node (static/tests/chat_view.test.mjs). Words the user reads are not made
 * here: the components translate them; these functions return codes and data.
 *
 * Tool output is untrusted: nothing here builds HTML. Images become data URIs
 * only for the four raster types a browser shows without running anything, from data that is
 * strictly base64; anything else is described, never loaded.
 */

export const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** `data:<mime>;base64,<data>` for an image part of an allowed type, else null. */
export function imageDataUri(part) {
    const mime = typeof part?.mime_type === "string" ? part.mime_type.trim().toLowerCase() : "";
    const data = typeof part?.data === "string" ? part.data.replace(/\s+/g, "") : "";
    if (!IMAGE_TYPES.has(mime) || !data || data.length % 4 !== 0 || !BASE64.test(data)) {
        return null;
    }
    return `data:${mime};base64,${data}`;
}

/** A tool's icon as the server side kept it (services/icons.py): a data URI of a raster image
 * type, checked again here; anything else is no icon. */
export function iconSrc(icon) {
    const found =
        typeof icon === "string"
            ? /^data:(image\/[a-z+.-]+);base64,([A-Za-z0-9+/=]+)$/.exec(icon)
            : null;
    return found ? imageDataUri({mime_type: found[1], data: found[2]}) : null;
}

/** Indented JSON for arguments and structured results; never throws (cycles, BigInt...). */
export function prettyJson(value) {
    if (value === undefined) {
        return "";
    }
    try {
        return JSON.stringify(value, null, 2) ?? String(value);
    } catch {
        return String(value);
    }
}

/** How far a running call is, in percent, from its latest progress; null when the server gives no
 * total (an indeterminate bar). */
export function progressPercent(progress) {
    if (!progress || typeof progress.total !== "number" || !(progress.total > 0)) {
        return null;
    }
    return Math.min(100, Math.max(0, (progress.progress / progress.total) * 100));
}

/** 35 -> "35 ms", 1234 -> "1.2 s", 65000 -> "1 min 5 s"; null or negative -> "". */
export function formatDuration(ms) {
    if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
        return "";
    }
    if (ms < 1000) {
        return `${Math.round(ms)} ms`;
    }
    if (ms < 60000) {
        const seconds = ms / 1000;
        return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
    }
    const minutes = Math.floor(ms / 60000);
    const seconds = Math.round((ms % 60000) / 1000);
    return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
}

/**
 * A tool result's typed parts (services/tool_result.py) as items to show, each with a `kind`:
 *   text      { text }                       plain text, shown escaped
 *   json      { json, value? }               indented JSON: a text part that is a JSON object or array;
 *                                            structured content also carries its `value`, shown as a tree
 *   image     { src, mimeType }              a data URI from imageDataUri
 *   blocked   { type, mimeType, bytes }      an image of another type, audio, a binary resource: described
 *                                            (a binary resource also carries its `uri` and `blob`, to download)
 *   resource  { uri, mimeType, text }        an embedded text resource
 *   link      { uri, name, description, href }  a resource link; href only for http(s) URIs
 *   fields    { rows: [[name, value]] }      structured content that is one flat record
 *   table     { caption, columns, rows, more }  structured content holding one list of flat records
 *                                            (at most TABLE_ROWS rows; `more` says how many are left out)
 *   records   { modelName, records: [{ key, name, href, model, id }], count, returned }
 *                                            structured content listing Odoo records, each with its
 *                                            `url` (the "This Odoo" tools): links to their forms; a
 *                                            record whose url is no record link (recordLink) has no href
 * A text part repeating the structured content (as MCP servers are told to do) is shown once, and
 * so is a plain value that a server wraps as structured content {"result": value} and also sends as text.
 */
export function resultItems(content) {
    const parts = Array.isArray(content)
        ? content.filter((part) => part && typeof part === "object")
        : [];
    const structured = parts
        .filter((part) => part.type === "structured")
        .map((part) => canonicalJson(part.data));
    const texts = parts
        .filter((part) => part.type === "text")
        .map((part) => String(part.text ?? "").trim());
    const items = [];
    for (const part of parts) {
        if (part.type === "structured" && wrapsText(part.data, texts)) {
            continue;
        }
        const item = resultItem(part, structured);
        if (item) {
            items.push({...item, index: items.length});
        }
    }
    return items;
}

function resultItem(part, structured) {
    switch (part.type) {
        case "text": {
            const text = String(part.text ?? "");
            const json = parseJsonValue(text);
            if (json === undefined) {
                return {kind: "text", text};
            }
            if (structured.includes(canonicalJson(json))) {
                return null; // the same data follows as structured content
            }
            return {kind: "json", json: prettyJson(json)};
        }
        case "structured":
            return recordsItem(part.data) ?? structuredItem(part.data);
        case "image": {
            const src = imageDataUri(part);
            return src
                ? {kind: "image", src, mimeType: part.mime_type.trim().toLowerCase()}
                : {
                      kind: "blocked",
                      type: "image",
                      mimeType: String(part.mime_type ?? ""),
                      bytes: base64Bytes(part.data),
                  };
        }
        case "audio":
            return {
                kind: "blocked",
                type: "audio",
                mimeType: String(part.mime_type ?? ""),
                bytes: base64Bytes(part.data),
            };
        case "resource":
            if (typeof part.text === "string") {
                return {
                    kind: "resource",
                    uri: String(part.uri ?? ""),
                    mimeType: part.mime_type ?? null,
                    text: part.text,
                };
            }
            return {
                kind: "blocked",
                type: "resource",
                mimeType: String(part.mime_type ?? ""),
                bytes: base64Bytes(part.blob),
                uri: String(part.uri ?? ""),
                // an embedded binary can be downloaded: it is in the event already, within the display caps
                blob: typeof part.blob === "string" ? part.blob : null,
            };
        case "resource_link": {
            const uri = String(part.uri ?? "");
            return {
                kind: "link",
                uri,
                name: String(part.name ?? uri),
                description: part.description ?? null,
                href: /^https?:\/\//i.test(uri) ? uri : null,
            };
        }
        default:
            // A part type from a newer server: show what it carries rather than nothing.
            return {kind: "json", json: prettyJson(part)};
    }
}

/**
 * The record a click on a link opens in the web client, {model, id, href}: a plain click on a link
 * to a record's form (recordLink). Null for any other link, and for a click asking for a new tab or
 * window, which the browser handles itself from the link's href.
 */
export function clickedRecord(ev) {
    const link = ev?.target?.closest?.("a[href]");
    if (!link || ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey) {
        return null;
    }
    const href = link.getAttribute("href");
    const record = recordLink(href);
    return record ? {...record, href} : null;
}

/** A JSON object or array written as text, else undefined (a number or a word stays text). */
const TABLE_ROWS = 50;
const TABLE_COLUMNS = 12;

function isScalar(value) {
    return value === null || ["string", "number", "boolean"].includes(typeof value);
}

function isRecord(value) {
    return Boolean(value) && typeof value === "object" && !Array.isArray(value);
}

function scalarText(value) {
    return typeof value === "string" ? value : JSON.stringify(value);
}

/** Structured content as a user reads it best: one flat record as name/value rows, one list of
 * flat records as a table, anything else as indented JSON. */
function structuredItem(data) {
    if (!isRecord(data)) {
        return {kind: "json", json: prettyJson(data), value: data};
    }
    const entries = Object.entries(data);
    if (entries.length && entries.every(([, value]) => isScalar(value))) {
        return {kind: "fields", rows: entries.map(([name, value]) => [name, scalarText(value)])};
    }
    const [caption, list] = entries.length === 1 ? entries[0] : [];
    if (
        Array.isArray(list) &&
        list.length &&
        list.every((row) => isRecord(row) && Object.values(row).every(isScalar))
    ) {
        const columns = [...new Set(list.flatMap((row) => Object.keys(row)))];
        if (columns.length <= TABLE_COLUMNS) {
            const rows = list
                .slice(0, TABLE_ROWS)
                .map((row) =>
                    columns.map((column) => (column in row ? scalarText(row[column]) : ""))
                );
            return {
                kind: "table",
                caption,
                columns,
                rows,
                more: Math.max(0, list.length - TABLE_ROWS),
            };
        }
    }
    return {kind: "json", json: prettyJson(data), value: data};
}

/** `{model_name, records: [{id, display_name, url, ...}], count, returned}` as links to the records. */
function recordsItem(data) {
    const list = isRecord(data) ? data.records : null;
    if (
        !Array.isArray(list) ||
        !list.length ||
        !list.every((row) => isRecord(row) && typeof row.url === "string")
    ) {
        return null;
    }
    const count = (value) => (Number.isInteger(value) && value >= 0 ? value : null);
    return {
        kind: "records",
        modelName: typeof data.model_name === "string" ? data.model_name : "",
        records: list.slice(0, TABLE_ROWS).map((row, key) => {
            const record = recordLink(row.url);
            return {
                key,
                name: scalarText(row.display_name ?? row.id ?? row.url),
                href: record ? row.url : null,
                model: record?.model ?? null,
                id: record?.id ?? null,
            };
        }),
        count: count(data.count) ?? list.length,
        returned: count(data.returned) ?? list.length,
    };
}

/** Servers wrap a plain result as {"result": value} for the structured copy; a text part saying the
 * same value is what the user should read. */
function wrapsText(data, texts) {
    if (!isRecord(data) || Object.keys(data).length !== 1 || !("result" in data)) {
        return false;
    }
    const value = data.result;
    return texts.some((text) => {
        if (typeof value === "number") {
            return text !== "" && Number(text) === value; // Python says 5.0 where JSON says 5
        }
        return isScalar(value)
            ? text === scalarText(value)
            : canonicalJson(parseJsonValue(text)) === canonicalJson(value);
    });
}

function parseJsonValue(text) {
    const trimmed = text.trim();
    if (!(trimmed.startsWith("{") || trimmed.startsWith("["))) {
        return undefined;
    }
    try {
        return JSON.parse(trimmed);
    } catch {
        return undefined;
    }
}

/** JSON with sorted keys, to compare two values whatever the order of their keys. */
function canonicalJson(value) {
    const sort = (v) => {
        if (Array.isArray(v)) {
            return v.map(sort);
        }
        if (v && typeof v === "object") {
            return Object.fromEntries(
                Object.keys(v)
                    .sort()
                    .map((key) => [key, sort(v[key])])
            );
        }
        return v;
    };
    try {
        return JSON.stringify(sort(value));
    } catch {
        return null;
    }
}

/** Bytes a base64 text decodes to; null when there is none. */
export function base64Bytes(data) {
    if (typeof data !== "string") {
        return null;
    }
    const clean = data.replace(/\s+/g, "");
    const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
    return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

/** A pending call's answer: allowed once (true), allowed for the rest of the conversation
 * ("conversation": its tool's later calls, the model's and its apps', run without asking), or denied. */
const CALL_ANSWERS = [true, "conversation", false];

/** Every pending call has an answer (CALL_ANSWERS) in `decisions`. */
export function allDecided(calls, decisions) {
    return (calls ?? []).every((call) => CALL_ANSWERS.includes(decisions?.[call.id]));
}

/** The `approvals` of POST /ai_mcp/chat/resume: one answer per pending call (true,
 * "conversation" or false); no answer, or one it does not know, is a denial. */
export function approvalsFor(calls, decisions) {
    return Object.fromEntries(
        (calls ?? []).map((call) => {
            const answer = decisions?.[call.id];
            return [call.id, CALL_ANSWERS.includes(answer) ? answer : false];
        })
    );
}

/** The reducer status in which the model or tools are working and the stop button applies. */
export function isStreamingStatus(status) {
    return status === ChatStatus.THINKING || status === ChatStatus.RUNNING_TOOLS;
}
