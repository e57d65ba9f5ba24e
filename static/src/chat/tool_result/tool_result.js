/** @odoo-module */
import {Component, useState} from "@odoo/owl";
import {_t} from "@web/core/l10n/translation";

import {clickedRecord, resultItems} from "@ai_mcp/common/chat_view";
import {JsonTree} from "../json_tree/json_tree";

/**
 * The content of a tool result (typed parts, services/tool_result.py), shown as text, indented
 * JSON, a record or a table for structured content, images from allowed data URIs only, resources
 * and links. Everything is escaped by t-esc. A link to a resource of the server (not http) opens
 * here through `onOpen(uri)`, read from the server of the call; binaries are downloaded, never shown.
 * Odoo records a tool lists (structured `records` with their `url`) are links that open each
 * record's form in the web client (`env.aiMcpOpenRecord`).
 */
export class ToolResult extends Component {
    static template = "ai_mcp.ToolResult";
    static components = {JsonTree};
    static props = {
        content: {type: Array, optional: true},
        onOpen: {type: Function, optional: true},
    };
    static defaultProps = {content: []};

    setup() {
        this.opened = useState({});
    }

    get items() {
        return resultItems(this.props.content);
    }

    async open(uri) {
        this.opened[uri] = {loading: true, contents: [], error: null};
        let result;
        try {
            result = await this.props.onOpen(uri);
        } catch {
            result = {error: {message: _t("The resource could not be read; try again.")}};
        }
        this.opened[uri] = {
            loading: false,
            contents: result.contents || [],
            error: result.error?.message || null,
        };
    }

    download(content) {
        downloadBase64(content.blob, content.mime_type, content.uri);
    }

    recordsLabel(item) {
        const what = item.modelName || _t("Records");
        if (item.count > item.returned) {
            return _t("%(what)s: %(returned)s of %(count)s", {
                what,
                returned: item.returned,
                count: item.count,
            });
        }
        return _t("%(what)s: %(count)s", {what, count: item.returned});
    }

    openRecord(ev) {
        const record = clickedRecord(ev);
        if (record && this.env.aiMcpOpenRecord) {
            ev.preventDefault();
            this.env.aiMcpOpenRecord(record);
        }
    }

    moreLabel(item) {
        return _t("%(count)s more rows not shown.", {count: item.more});
    }

    blockedLabel(item) {
        const kinds = {image: _t("Image"), audio: _t("Audio"), resource: _t("Binary resource")};
        const what = kinds[item.type] || item.type;
        const mime = item.mimeType || _t("unknown type");
        if (typeof item.bytes === "number") {
            return _t("%(what)s not shown (%(mime)s, %(bytes)s bytes)", {
                what,
                mime,
                bytes: item.bytes,
            });
        }
        return _t("%(what)s not shown (%(mime)s)", {what, mime});
    }
}

/** Saves base64 `data` as a file of its MIME type (a download, never shown in the page). */
function downloadBase64(data, mimeType, uri) {
    const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
    const url = URL.createObjectURL(
        new Blob([bytes], {type: mimeType || "application/octet-stream"})
    );
    const link = document.createElement("a");
    link.href = url;
    link.download = (String(uri).split(/[/:]/).filter(Boolean).pop() || "resource").slice(0, 100);
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
}
