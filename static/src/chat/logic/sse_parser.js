/** @odoo-module */
/**
 * Incremental parser of a text/event-stream body. The chat POSTs its message, which EventSource
 * cannot do, so it reads the stream with fetch() and feeds the chunks TextDecoder({ stream: true })
 * yields. Follows WHATWG's "interpreting an event stream", with two differences that suit the chat:
 * - `data` is JSON and is returned parsed; a payload that is not JSON is a broken stream and throws.
 * - `id` is that event's own `id:` line (a number when numeric) or null. EventSource would carry
 *   the last id over to events without one, which would make them look like replayed duplicates.
 */

export class SseParser {
    constructor() {
        this.partial = ""; // the start of a line whose end has not arrived yet
        this.afterCr = false; // the last chunk ended with \r: a \n opening the next one ends no line
        this.event = "";
        this.data = [];
        this.id = null;
    }

    /** Parse the next chunk of text; returns the events it completes, in order. */
    feed(text) {
        const events = [];
        if (!text) {
            return events;
        }
        let start = this.afterCr && text[0] === "\n" ? 1 : 0;
        this.afterCr = false;
        const lineEnd = /\r\n|\r|\n/g;
        lineEnd.lastIndex = start;
        for (let match = lineEnd.exec(text); match; match = lineEnd.exec(text)) {
            const line = this.partial + text.slice(start, match.index);
            this.partial = "";
            start = match.index + match[0].length;
            this.afterCr = match[0] === "\r" && start === text.length;
            const event = this.line(line);
            if (event) {
                events.push(event);
            }
        }
        this.partial += text.slice(start);
        return events;
    }

    line(line) {
        if (line === "") {
            return this.dispatch();
        }
        if (line[0] === ":") {
            return null; // a comment: the server's heartbeat
        }
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? "" : line.slice(colon + 1);
        if (value[0] === " ") {
            value = value.slice(1);
        }
        if (field === "event") {
            this.event = value;
        } else if (field === "data") {
            this.data.push(value);
        } else if (field === "id" && !value.includes("\0")) {
            this.id = value;
        }
        return null;
    }

    dispatch() {
        const {event, data, id} = this;
        this.event = "";
        this.data = [];
        this.id = null;
        if (!data.length) {
            return null;
        }
        const type = event || "message";
        return {event: type, data: parseData(type, data.join("\n")), id: toId(id)};
    }
}

function parseData(type, text) {
    try {
        return JSON.parse(text);
    } catch (error) {
        throw new Error(
            `The "${type}" event's data is not JSON (${error.message}): ${text.slice(0, 200)}`
        );
    }
}

function toId(id) {
    if (!id) {
        return null;
    }
    return /^\d{1,15}$/.test(id) ? Number(id) : id;
}
