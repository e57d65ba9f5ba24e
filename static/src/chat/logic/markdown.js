/** @odoo-module */
import {recordLink} from "../../common/record_link.js";
/**
 * Markdown of the assistant's answers as an HTML string, for t-out with markup().
 *
 * The model's text is untrusted (a tool's output can steer it), so safety does not rest on
 * sanitizing: every character of the input reaches the output through escapeHtml(), the only tags
 * are the ones written below, and links keep http(s) and mailto URLs, and the web client's own
 * record links `/odoo/<model>/<id>` (recordLink), which carry the record in data attributes for
 * the chat to open in the web client.
 * The answer is rendered again on every streamed delta, so parsing is line by line and each inline
 * search resumes where the last one stopped: no regex that can backtrack over a long input. Text cut
 * off mid-stream renders as what it is so far (an unclosed ``` fence is a code block up to the end,
 * a table whose delimiter row is still coming is a table of its header row).
 *
 * Supported: paragraphs (a newline is a line break), # to ###### headings, - * + and 1. 1) lists
 * (nested by indentation), ``` fences with a language, GitHub's pipe tables, `code`, **bold**,
 * *emphasis*, [text](url), and backslash escapes.
 */

const FENCE = /^([ \t]*)(`{3,})[ \t]*([^`]*)$/;
const FENCE_CLOSE = /^[ \t]*(`{3,})[ \t]*$/;
const HEADING = /^ {0,3}(#{1,6})[ \t]+(\S.*)$/;
const ITEM = /^([ \t]*)([-*+]|\d{1,9}[.)])[ \t]+(.*)$/;
const LANGUAGE = /^[\w#+.-]{1,32}$/;
const LINK_URL = /^(https?:\/\/|mailto:)/i;
const DELIMITER_CELL = /^:?-+:?$/;
const PARTIAL_DELIMITER = /^[-|: \t]*$/;
const PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
const ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};

export function renderMarkdown(text) {
    const lines = String(text ?? "").split(/\r\n|\r|\n/);
    const html = [];
    let i = 0;
    while (i < lines.length) {
        const line = lines[i];
        const fence = FENCE.exec(line);
        const heading = HEADING.exec(line);
        if (isBlank(line)) {
            i++;
        } else if (fence) {
            i = codeBlock(lines, i, fence, html);
        } else if (heading) {
            const level = heading[1].length;
            html.push(`<h${level}>${inline(heading[2].trim())}</h${level}>`);
            i++;
        } else if (ITEM.test(line)) {
            i = list(lines, i, html);
        } else if (tableAt(lines, i)) {
            i = table(lines, i, html);
        } else {
            i = paragraph(lines, i, html);
        }
    }
    return html.join("");
}

function escapeHtml(text) {
    return text.replace(/[&<>"']/g, (char) => ESCAPES[char]);
}

function isBlank(line) {
    return line.trim() === "";
}

function startsBlock(line) {
    return FENCE.test(line) || HEADING.test(line) || ITEM.test(line);
}

function indentWidth(line) {
    let width = 0;
    for (const char of line) {
        if (char === " ") {
            width += 1;
        } else if (char === "\t") {
            width += 4;
        } else {
            break;
        }
    }
    return width;
}

// -- blocks ---------------------------------------------------------------------------------------

function codeBlock(lines, i, [, indent, ticks, info], html) {
    const language = info.trim().split(/[ \t]/)[0];
    const attribute = LANGUAGE.test(language) ? ` class="language-${escapeHtml(language)}"` : "";
    const body = [];
    let next = i + 1;
    for (; next < lines.length; next++) {
        const close = FENCE_CLOSE.exec(lines[next]);
        if (close && close[1].length >= ticks.length) {
            next++;
            break;
        }
        body.push(dedent(lines[next], indent.length));
    }
    html.push(`<pre><code${attribute}>${escapeHtml(body.join("\n"))}</code></pre>`);
    return next;
}

/** A fence indented under a list item indents its code as much; that indentation is not code. */
function dedent(line, width) {
    let cut = 0;
    while (cut < width && (line[cut] === " " || line[cut] === "\t")) {
        cut++;
    }
    return line.slice(cut);
}

function paragraph(lines, i, html) {
    const parts = [lines[i].trim()];
    let next = i + 1;
    for (
        ;
        next < lines.length &&
        !isBlank(lines[next]) &&
        !startsBlock(lines[next]) &&
        !tableAt(lines, next);
        next++
    ) {
        parts.push(lines[next].trim());
    }
    html.push(`<p>${parts.map(inline).join("<br>")}</p>`);
    return next;
}

// -- tables ---------------------------------------------------------------------------------------

/**
 * A table starts at a row followed by a delimiter row of as many cells (`| --- | :-: |`). While the
 * answer streams, the delimiter row may be the last line and still incomplete (`|---|--`): a header
 * written with its leading pipe already shows as a table rather than as a paragraph of pipes that
 * turns into one.
 */
function tableAt(lines, i) {
    if (i + 1 >= lines.length || !lines[i].includes("|")) {
        return false;
    }
    const delimiter = lines[i + 1];
    const aligns = alignments(delimiter);
    if (aligns !== null && aligns.length === rowCells(lines[i]).length) {
        return true;
    }
    return (
        i + 2 === lines.length &&
        lines[i].trim().startsWith("|") &&
        PARTIAL_DELIMITER.test(delimiter) &&
        /[-|]/.test(delimiter)
    );
}

/** The alignment of each column of a delimiter row, or null when the line is none. */
function alignments(line) {
    if (!line.includes("-")) {
        return null;
    }
    const cells = rowCells(line);
    if (!cells.every((cell) => DELIMITER_CELL.test(cell))) {
        return null;
    }
    return cells.map((cell) => {
        const left = cell.startsWith(":");
        const right = cell.endsWith(":");
        return left && right ? "center" : right ? "end" : left ? "start" : null;
    });
}

/** The cells of a row, trimmed: split at each `|` not escaped, its outer pipes dropped. */
function rowCells(line) {
    const cells = [];
    let cell = "";
    for (let k = 0; k < line.length; k++) {
        const char = line[k];
        if (char === "\\" && line[k + 1] === "|") {
            cell += "|"; // an escaped pipe is text, in code too
            k++;
        } else if (char === "|") {
            cells.push(cell);
            cell = "";
        } else {
            cell += char;
        }
    }
    cells.push(cell);
    if (cells.length > 1 && isBlank(cells[0])) {
        cells.shift();
    }
    if (cells.length > 1 && isBlank(cells.at(-1))) {
        cells.pop();
    }
    return cells.map((text) => text.trim());
}

function table(lines, i, html) {
    const header = rowCells(lines[i]);
    const aligns = alignments(lines[i + 1]) || header.map(() => null);
    const rows = [];
    let next = i + 2;
    for (
        ;
        next < lines.length &&
        lines[next].includes("|") &&
        !isBlank(lines[next]) &&
        !startsBlock(lines[next]);
        next++
    ) {
        rows.push(rowCells(lines[next]));
    }
    // a row has the header's columns: a short one (still streaming) is padded, extra cells dropped
    const rowHtml = (cells, tag) =>
        "<tr>" +
        header.map((_, column) => cellHtml(tag, aligns[column], cells[column] ?? "")).join("") +
        "</tr>";
    const body = rows.length
        ? `<tbody>${rows.map((row) => rowHtml(row, "td")).join("")}</tbody>`
        : "";
    html.push(`<table><thead>${rowHtml(header, "th")}</thead>${body}</table>`);
    return next;
}

/** No template literal within another's `${}`: Odoo's asset minifier takes the inner one for code
 * and drops its spaces (`<thclass=...>`). */
function cellHtml(tag, align, text) {
    const attribute = align ? ` class="text-${align}"` : "";
    return `<${tag}${attribute}>${inline(text)}</${tag}>`;
}

// -- lists ----------------------------------------------------------------------------------------

function list(lines, i, html) {
    const roots = [];
    const open = []; // the lists being filled, outermost first
    let next = i;
    while (next < lines.length) {
        const line = lines[next];
        if (isBlank(line)) {
            // Models often leave a blank line between items: the list goes on if an item follows.
            let after = next + 1;
            while (after < lines.length && isBlank(lines[after])) {
                after++;
            }
            if (after === lines.length || !continuesList(lines[after])) {
                break;
            }
            next = after;
            continue;
        }
        const item = ITEM.exec(line);
        if (item) {
            addItem(open, roots, item);
        } else if (continuesList(line)) {
            open[open.length - 1].items.at(-1).lines.push(line.trim());
        } else {
            break;
        }
        next++;
    }
    html.push(...roots.map(listHtml));
    return next;
}

/** An item, or an indented line continuing the last one; a fence ends the list and is rendered after it. */
function continuesList(line) {
    return ITEM.test(line) || (indentWidth(line) > 0 && !FENCE.test(line));
}

function addItem(open, roots, [, indent, marker, text]) {
    const width = indentWidth(indent);
    const ordered = marker.length > 1;
    while (open.length && width < open[open.length - 1].indent) {
        open.pop();
    }
    let current = open[open.length - 1];
    if (current && width >= current.indent + 2) {
        current = newList(current.items.at(-1).children, open, width, ordered, marker);
    } else if (!current || current.ordered !== ordered) {
        if (current) {
            open.pop();
        }
        const parent = open[open.length - 1];
        current = newList(
            parent ? parent.items.at(-1).children : roots,
            open,
            width,
            ordered,
            marker
        );
    }
    current.items.push({lines: [text.trim()], children: []});
}

function newList(siblings, open, indent, ordered, marker) {
    const created = {indent, ordered, start: ordered ? parseInt(marker, 10) : 1, items: []};
    siblings.push(created);
    open.push(created);
    return created;
}

function listHtml({ordered, start, items}) {
    const tag = ordered ? "ol" : "ul";
    const startAttribute = start === 1 ? "" : ` start="${start}"`;
    const body = items.map(
        ({lines, children}) =>
            `<li>${lines.map(inline).join("<br>")}${children.map(listHtml).join("")}</li>`
    );
    return `<${tag}${startAttribute}>${body.join("")}</${tag}>`;
}

// -- inline ---------------------------------------------------------------------------------------

function inline(source) {
    const find = {
        bracket: finder(source, /\]/g),
        paren: finder(source, /\)/g),
        space: finder(source, /\s/g),
        star: finder(source, /[*]/g),
        stars: finder(source, /[*]{2}/g),
        backticks: null, // built on the first backtick
    };
    let html = "";
    let plain = 0;
    let i = 0;
    while (i < source.length) {
        const char = source[i];
        let token = null;
        if (char === "\\" && i + 1 < source.length && PUNCTUATION.includes(source[i + 1])) {
            token = {html: escapeHtml(source[i + 1]), end: i + 2};
        } else if (char === "`") {
            find.backticks ??= backtickRuns(source);
            token = codeSpan(source, i, find.backticks);
        } else if (char === "[") {
            token = link(source, i, find);
        } else if (char === "*") {
            token =
                source[i + 1] === "*"
                    ? emphasis(source, i, 2, find.stars, "strong")
                    : emphasis(source, i, 1, find.star, "em");
        }
        if (token) {
            html += escapeHtml(source.slice(plain, i)) + token.html;
            i = plain = token.end;
        } else {
            i += char === "`" || char === "*" ? runLength(source, i) : 1;
        }
    }
    return html + escapeHtml(source.slice(plain));
}

/** The next match at or after a position. The scan moves forward, so a search is only redone past its last find. */
function finder(source, pattern) {
    let searchedFrom = Infinity;
    let found = -1;
    return (from) => {
        if (from < searchedFrom || (found !== -1 && from > found)) {
            pattern.lastIndex = from;
            found = pattern.exec(source)?.index ?? -1;
            searchedFrom = from;
        }
        return found;
    };
}

function runLength(source, i) {
    let end = i + 1;
    while (source[end] === source[i]) {
        end++;
    }
    return end - i;
}

/** Where each run of backticks starts, by length: a code span closes with a run as long as its opening. */
function backtickRuns(source) {
    const runs = new Map();
    for (const match of source.matchAll(/`+/g)) {
        const length = match[0].length;
        if (!runs.has(length)) {
            runs.set(length, {starts: [], next: 0});
        }
        runs.get(length).starts.push(match.index);
    }
    return runs;
}

function codeSpan(source, i, runs) {
    const length = runLength(source, i);
    const run = runs.get(length);
    while (run.next < run.starts.length && run.starts[run.next] <= i) {
        run.next++;
    }
    if (run.next === run.starts.length) {
        return null;
    }
    const close = run.starts[run.next];
    let code = source.slice(i + length, close);
    if (code.length > 2 && code[0] === " " && code.at(-1) === " " && code.trim()) {
        code = code.slice(1, -1); // lets a span start or end with a backtick: `` `x` ``
    }
    return {html: `<code>${escapeHtml(code)}</code>`, end: close + length};
}

function link(source, i, find) {
    const close = find.bracket(i + 1);
    if (close <= i + 1 || source[close + 1] !== "(") {
        return null;
    }
    const urlStart = close + 2;
    const end = find.paren(urlStart);
    const space = find.space(urlStart);
    if (end <= urlStart || (space !== -1 && space < end)) {
        return null;
    }
    const url = source.slice(urlStart, end);
    const record = recordLink(url);
    if (!record && !LINK_URL.test(url)) {
        // Not a scheme we let the user open (javascript:, data:, relative...): show what the model wrote.
        return {html: escapeHtml(source.slice(i, end + 1)), end: end + 1};
    }
    const text = inline(source.slice(i + 1, close));
    // a record opens in this web client (the chat handles the click), the rest in a new tab
    const attributes = record
        ? `data-res-model="${record.model}" data-res-id="${record.id}"`
        : 'rel="noopener noreferrer" target="_blank"';
    return {html: `<a href="${escapeHtml(url)}" ${attributes}>${text}</a>`, end: end + 1};
}

/** `2 * 3 * 4` is no emphasis: the delimiters must hug the text they wrap. */
function emphasis(source, i, width, findClose, tag) {
    const start = i + width;
    const close = findClose(start);
    if (close <= start || /\s/.test(source[start]) || /\s/.test(source[close - 1])) {
        return null;
    }
    return {html: `<${tag}>${inline(source.slice(start, close))}</${tag}>`, end: close + width};
}
