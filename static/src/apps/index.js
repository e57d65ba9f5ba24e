/** @odoo-module */
/**
 * The MCP Apps wing's face: what the chat takes from it. The frame of a tool call's app (its
 * session with the app and the requests the app makes, on the chat's store). Other wings import
 * this, never its files.
 */
export {AppFrame} from "./app_frame/app_frame";
