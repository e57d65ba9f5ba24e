/** @odoo-module */
/**
 * What differs between Odoo 18 and 19 for the tours (the Python side: odoo_compat.py).
 */
import {session} from "@web/session";

const SERIES = session.server_version_info[0];

/**
 * A step that reloads the page: Odoo 19 must be told (`expectUnloadPage`) or it fails the tour,
 * Odoo 18's step schema has no such key and logs an error for it.
 */
export function unloadsPage(step) {
    return SERIES >= 19 ? {...step, expectUnloadPage: true} : step;
}
