/** @odoo-module */
/**
 * The MCP Apps wing's face: what the chat takes from it. The frame of a tool call's app (its
 * session with the app and the requests the app makes) and the messages apps send in the user's
 * name. Other wings import this, never its files.
 */
export {AppFrame} from "./app_frame/app_frame";
export {AppMessages} from "./logic/app_messages";
