/** @odoo-module */
import {CallStatus} from "../../common/chat_status.js";
/**
 * The decisions of the chat's MCP Apps host (static/src/chat/app_frame/) as plain functions with no
 * Odoo import, tested by node (static/tests/app_host.test.mjs): what the host tells an app about
 * itself (ui/initialize), which of an app's requests it accepts, and what it tells the app about
 * the tool call it renders. Errors are returned as { code, ...data }; the component words them in
 * the user's language.
 *
 * Everything an app sends is untrusted: the app runs a server's HTML in a sandboxed frame.
 */

export const DISPLAY_MODES = Object.freeze(["inline", "fullscreen"]);
/** The tallest an inline app may make itself, in pixels; it scrolls inside beyond that. */
export const INLINE_MAX_HEIGHT = 600;
const MIN_HEIGHT = 60;
/** An app hidden (its call's block collapsed) this long is torn down, in milliseconds. */
export const TEARDOWN_AFTER_MS = 60_000;
/** The most a ui/download-file may save at once, in bytes. */
export const DOWNLOAD_LIMIT_BYTES = 10 * 1024 * 1024;
/** The most text a ui/update-model-context may put before the model, in characters. */
export const MODEL_CONTEXT_LIMIT = 8000;

const LINK_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);
const DOWNLOAD_LINK_PROTOCOLS = new Set(["http:", "https:"]);

/**
 * Odoo's look as the app's style variables: each MCP variable is read from the Bootstrap CSS
 * variable Odoo's backend sets in its light or dark scheme (Odoo's Bootstrap has no "bs-" prefix).
 */
const STYLE_SOURCES = Object.freeze({
    "--color-background-primary": "--body-bg",
    "--color-background-secondary": "--secondary-bg",
    "--color-background-tertiary": "--tertiary-bg",
    "--color-text-primary": "--body-color",
    "--color-text-secondary": "--secondary-color",
    "--color-text-tertiary": "--tertiary-color",
    "--color-text-danger": "--danger",
    "--color-text-success": "--success",
    "--color-text-warning": "--warning",
    "--color-text-info": "--info",
    "--color-border-primary": "--border-color",
    "--color-ring-primary": "--primary",
    "--font-sans": "--body-font-family",
    "--font-mono": "--font-monospace",
    "--border-radius-sm": "--border-radius-sm",
    "--border-radius-md": "--border-radius",
    "--border-radius-lg": "--border-radius-lg",
    "--border-width-regular": "--border-width",
});

/** An Odoo language code as BCP 47: "fr_BE" -> "fr-BE", "sr@latin" -> "sr-Latn"; a BCP 47 tag
 * stays as it is; nothing -> undefined. */
export function bcp47Locale(lang) {
    if (typeof lang !== "string" || !lang.trim()) {
        return undefined;
    }
    const match = /^([a-z]{2,3})(?:_([A-Za-z0-9]+))?(?:@(\w+))?$/.exec(lang.trim());
    if (!match) {
        return lang.trim();
    }
    const [, language, region, modifier] = match;
    const script = {latin: "Latn", Latn: "Latn", Cyrl: "Cyrl", cyrillic: "Cyrl"}[modifier];
    return [language, script, region].filter(Boolean).join("-");
}

/** The MCP style variables from `read(bootstrapVariable)` (a computed style's value); empty values
 * are left out. */
export function styleVariables(read) {
    const variables = {};
    for (const [name, source] of Object.entries(STYLE_SOURCES)) {
        const value = String(read(source) ?? "").trim();
        if (value) {
            variables[name] = value;
        }
    }
    return variables;
}

/**
 * The room the app has: inline, the chat column's width and INLINE_MAX_HEIGHT at most; fullscreen,
 * the whole window below the overlay's header, fixed.
 */
export function containerDimensions(displayMode, {inlineWidth, viewport, headerHeight = 0}) {
    if (displayMode === "fullscreen") {
        return {
            width: Math.max(0, Math.round(viewport.width)),
            height: Math.max(0, Math.round(viewport.height - headerHeight)),
        };
    }
    return {maxWidth: Math.max(0, Math.round(inlineWidth)), maxHeight: INLINE_MAX_HEIGHT};
}

/**
 * The scheme a page is drawn in, from its background colours (computed `rgb()`/`rgba()` values,
 * the innermost first: the body's, then the root's): the first that is not transparent says it,
 * "dark" when it is dark, else "light" (also when none says). What Odoo renders, whatever its
 * color_scheme cookie asks: Community has no dark scheme.
 */
export function renderedScheme(backgrounds) {
    for (const background of backgrounds) {
        const match = /^rgba?\(([^)]*)\)$/.exec(String(background ?? "").trim());
        const parts = match
            ? match[1]
                  .split(/[\s,/]+/)
                  .filter(Boolean)
                  .map(Number)
            : [];
        const [red, green, blue, alpha = 1] = parts;
        if (parts.length >= 3 && !parts.some(Number.isNaN) && alpha > 0) {
            return luminance(red, green, blue) < DARK_BELOW ? "dark" : "light";
        }
    }
    return "light";
}

/** The luminance whose contrast with black equals its contrast with white. */
const DARK_BELOW = 0.179;

/** The relative luminance (WCAG) of an sRGB colour of 0-255 channels. */
function luminance(red, green, blue) {
    const linear = (channel) => {
        const value = channel / 255;
        return value <= 0.04045 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue);
}

/**
 * The host context of ui/initialize. `colorScheme`: the scheme Odoo renders (renderedScheme:
 * "dark" or anything else for light);
 * `lang`: the user's language (Odoo's or BCP 47); `tool`: the tool whose call the app renders.
 */
export function hostContext({
    colorScheme,
    lang,
    timeZone,
    displayMode = "inline",
    inlineWidth,
    viewport,
    headerHeight = 0,
    styles = {},
    tool = null,
}) {
    const context = {
        theme: colorScheme === "dark" ? "dark" : "light",
        platform: "web",
        displayMode,
        availableDisplayModes: [...DISPLAY_MODES],
        containerDimensions: containerDimensions(displayMode, {
            inlineWidth,
            viewport,
            headerHeight,
        }),
        styles: {variables: styles},
    };
    const locale = bcp47Locale(lang);
    if (locale) {
        context.locale = locale;
    }
    if (timeZone) {
        context.timeZone = timeZone;
    }
    if (tool?.name) {
        context.toolInfo = {tool: toolDefinition(tool)};
    }
    return context;
}

/** The tool as an MCP Tool: its name and input schema, its title and description when it has them
 * (the server sends null for none, which an MCP Tool cannot hold). */
function toolDefinition(tool) {
    const schema = tool.inputSchema;
    const definition = {
        name: String(tool.name),
        inputSchema: schema && typeof schema === "object" ? schema : {type: "object"},
    };
    for (const key of ["title", "description"]) {
        if (typeof tool[key] === "string" && tool[key]) {
            definition[key] = tool[key];
        }
    }
    return definition;
}

/**
 * What the host offers the app: links, downloads, its server's tools and resources (through the
 * Odoo server, which checks each call), log messages, messages to the chat, model context, and the
 * sandbox as the Odoo server granted it (`permissions`, `csp`).
 */
export function hostCapabilities({permissions = {}, csp = {}} = {}) {
    return {
        openLinks: {},
        downloadFile: {},
        serverTools: {},
        serverResources: {},
        logging: {},
        message: {text: {}},
        updateModelContext: {text: {}, structuredContent: {}},
        sandbox: {permissions: permissions || {}, csp: csp || {}},
    };
}

/**
 * The display mode an app gets when it asks for `requested`: that mode when the host and the app
 * (its declared `appModes`, when it declared any) both support it, else the mode it has.
 */
export function decideDisplayMode(requested, appModes, current = "inline") {
    const appSupports = !Array.isArray(appModes) || appModes.includes(requested);
    return DISPLAY_MODES.includes(requested) && appSupports ? requested : current;
}

/** The height an app asks for, kept between a small minimum and INLINE_MAX_HEIGHT. */
export function clampHeight(height) {
    if (typeof height !== "number" || !Number.isFinite(height)) {
        return null;
    }
    return Math.round(Math.min(INLINE_MAX_HEIGHT, Math.max(MIN_HEIGHT, height)));
}

/**
 * A ui/open-link URL checked: { url, host } for http(s) and mailto (host: what the user must see,
 * the address's host or a mail's recipient), else { error: { code, url } }.
 */
export function checkOpenLink(url) {
    const parsed = parseUrl(url);
    if (!parsed) {
        return {error: {code: "link_invalid", url: String(url ?? "")}};
    }
    if (!LINK_PROTOCOLS.has(parsed.protocol)) {
        return {error: {code: "link_refused", url: parsed.href}};
    }
    const host = parsed.protocol === "mailto:" ? decodeSafely(parsed.pathname) : parsed.host;
    return {url: parsed.href, host};
}

/**
 * The files of a ui/download-file, checked: { files: [{ name, mimeType, size, text | base64 | url }] }
 * or { error: { code, ... } }. An embedded resource carries its text or base64 blob; a link is
 * fetched by the browser and must be http(s). The files together weigh DOWNLOAD_LIMIT_BYTES at most
 * (a link counts only the size it declares).
 */
export function checkDownload(contents) {
    if (!Array.isArray(contents) || !contents.length) {
        return {error: {code: "download_empty"}};
    }
    const files = [];
    let total = 0;
    for (const item of contents) {
        const file = downloadFile(item);
        if (file.error) {
            return file;
        }
        total += file.size ?? 0;
        files.push(file);
    }
    if (total > DOWNLOAD_LIMIT_BYTES) {
        return {error: {code: "download_too_large", size: total, limit: DOWNLOAD_LIMIT_BYTES}};
    }
    return {files};
}

function downloadFile(item) {
    if (item?.type === "resource_link") {
        const parsed = parseUrl(item.uri);
        if (!parsed || !DOWNLOAD_LINK_PROTOCOLS.has(parsed.protocol)) {
            return {error: {code: "download_link_refused", url: String(item.uri ?? "")}};
        }
        return {
            name: fileName(item.name || parsed.pathname),
            mimeType: item.mimeType || null,
            size: typeof item.size === "number" ? item.size : null,
            url: parsed.href,
        };
    }
    const resource = item?.type === "resource" ? item.resource : null;
    if (resource && typeof resource.text === "string") {
        return {
            name: fileName(resource.uri),
            mimeType: resource.mimeType || "text/plain",
            size: utf8Bytes(resource.text),
            text: resource.text,
        };
    }
    if (resource && typeof resource.blob === "string" && isBase64(resource.blob)) {
        return {
            name: fileName(resource.uri),
            mimeType: resource.mimeType || "application/octet-stream",
            size: base64Size(resource.blob),
            base64: resource.blob.replace(/\s+/g, ""),
        };
    }
    return {error: {code: "download_unsupported", type: String(item?.type ?? "")}};
}

/** A file name for the user's disk: the last segment of a path or URI, without anything a file
 * system or the browser would read as a path. */
export function fileName(pathOrUri) {
    const text = decodeSafely(String(pathOrUri ?? ""));
    const last = text.split(/[/\\]/).filter(Boolean).pop() || "";
    // eslint-disable-next-line no-control-regex
    const clean = last.replace(/[\u0000-\u001f\u007f<>:"|?*]+/g, "_").replace(/^\.+/, "");
    return clean.slice(0, 120) || "download";
}

/**
 * A ui/update-model-context checked: { content, structuredContent } when it holds text blocks only
 * and, with its structured content as JSON, MODEL_CONTEXT_LIMIT characters at most; else
 * { error: { code, ... } }.
 */
export function checkModelContext({content, structuredContent} = {}) {
    const blocks = Array.isArray(content) ? content : [];
    const other = blocks.find((block) => block?.type !== "text");
    if (other) {
        return {error: {code: "context_unsupported", type: String(other?.type ?? "")}};
    }
    const structured =
        structuredContent && typeof structuredContent === "object" ? structuredContent : null;
    const length =
        blocks.reduce((sum, block) => sum + String(block.text ?? "").length, 0) +
        (structured ? JSON.stringify(structured).length : 0);
    if (length > MODEL_CONTEXT_LIMIT) {
        return {error: {code: "context_too_long", length, limit: MODEL_CONTEXT_LIMIT}};
    }
    return {content: blocks, structuredContent: structured};
}

/** The text of a ui/message (its text blocks), or { error: { code } } when it has none. */
export function messageText(params) {
    const blocks = Array.isArray(params?.content) ? params.content : [];
    if (params?.role !== undefined && params.role !== "user") {
        return {error: {code: "message_role", role: String(params.role)}};
    }
    const text = blocks
        .filter((block) => block?.type === "text" && typeof block.text === "string")
        .map((block) => block.text.trim())
        .filter(Boolean)
        .join("\n\n");
    return text ? {text} : {error: {code: "message_empty"}};
}

/** Whether an app whose block has been collapsed since `collapsedSince` (null: it is shown) is to
 * be torn down at `now`. */
export function shouldTearDown(collapsedSince, now, after = TEARDOWN_AFTER_MS) {
    return typeof collapsedSince === "number" && now - collapsedSince > after;
}

/**
 * What the app is told once its call is over, from what the server stored ({ result: the MCP
 * CallToolResult or null, cancelled }): { kind: "result", params } for sendToolResult,
 * { kind: "cancelled", params: { reason } } for sendToolCancelled, or null when nothing is stored.
 */
export function storedOutcome({result, cancelled} = {}) {
    if (cancelled) {
        return {kind: "cancelled", params: {reason: "cancelled"}};
    }
    if (result && typeof result === "object") {
        return {kind: "result", params: {content: [], ...result}};
    }
    return null;
}

const CANCELLED_REASONS = Object.freeze({
    [CallStatus.CANCELLED]: "cancelled by the user",
    [CallStatus.DENIED]: "denied by the user",
});
const INTERRUPTED_REASONS = Object.freeze({
    stopped: "the user stopped the answer",
    error: "the answer ended with an error",
});

/**
 * What the app is told once its call is over, from the chat's own tool block (chat_state.js): the
 * same kinds as storedOutcome; null while the call has not ended.
 */
export function blockOutcome(block) {
    const result = block?.result;
    if (!result) {
        return null;
    }
    if (result.interrupted) {
        return {kind: "cancelled", params: {reason: INTERRUPTED_REASONS[result.interrupted]}};
    }
    if (Object.hasOwn(CANCELLED_REASONS, block.status)) {
        return {kind: "cancelled", params: {reason: CANCELLED_REASONS[block.status]}};
    }
    return {kind: "result", params: callToolResult(result)};
}

/** A tool block's result (the typed parts of services/tool_result.py) as an MCP CallToolResult. */
export function callToolResult(result) {
    const content = [];
    let structuredContent;
    for (const part of result.content ?? []) {
        if (part.type === "structured") {
            structuredContent = part.data;
        } else {
            const block = contentBlock(part);
            if (block) {
                content.push(block);
            }
        }
    }
    if (!result.ok && !content.length) {
        content.push({type: "text", text: result.errorMessage || result.errorCode || "error"});
    }
    const call = {content, isError: !result.ok};
    if (structuredContent !== undefined) {
        call.structuredContent = structuredContent;
    }
    return call;
}

function contentBlock(part) {
    switch (part.type) {
        case "text":
            return {type: "text", text: String(part.text ?? "")};
        case "image":
        case "audio":
            return {type: part.type, data: part.data, mimeType: part.mime_type};
        case "resource": {
            const resource = {uri: part.uri, mimeType: part.mime_type ?? undefined};
            if (typeof part.text === "string") {
                resource.text = part.text;
            } else {
                resource.blob = part.blob ?? "";
            }
            return {type: "resource", resource};
        }
        case "resource_link":
            return {
                type: "resource_link",
                uri: part.uri,
                name: part.name,
                description: part.description ?? undefined,
                mimeType: part.mime_type ?? undefined,
            };
        default:
            return null;
    }
}

function parseUrl(url) {
    if (typeof url !== "string" || !url.trim()) {
        return null;
    }
    try {
        return new URL(url.trim());
    } catch {
        return null;
    }
}

function decodeSafely(text) {
    try {
        return decodeURIComponent(text);
    } catch {
        return text;
    }
}

function isBase64(data) {
    const clean = data.replace(/\s+/g, "");
    return clean.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(clean);
}

function base64Size(data) {
    const clean = data.replace(/\s+/g, "");
    const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
    return Math.max(0, (clean.length / 4) * 3 - padding);
}

function utf8Bytes(text) {
    return new TextEncoder().encode(text).length;
}
