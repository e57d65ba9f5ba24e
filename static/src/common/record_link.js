/** @odoo-module */
// the web client's link to a record's form: a model's technical name and a database id
const RECORD_URL = /^\/odoo\/([a-z][a-z0-9_]{0,63}(?:\.[a-z0-9_]{1,64}){0,8})\/([1-9][0-9]{0,9})$/;

/**
 * {model, id} of a link to a record's form in the web client (`/odoo/res.partner/14`), else null:
 * the only relative URL the chat makes a link of, in an answer (markdown.js) and in a tool's
 * result (chat_view.js).
 */
export function recordLink(url) {
    const found = RECORD_URL.exec(String(url ?? ""));
    return found ? {model: found[1], id: parseInt(found[2], 10)} : null;
}
