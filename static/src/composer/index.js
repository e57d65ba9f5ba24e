/** @odoo-module */
/**
 * The composer wing's face: what the chat takes from it. The composer (the message box, the `/`
 * prompt menu and its form, the resource picker) and the store helpers behind it, which read the
 * prompts and resources of the conversation's servers. Other wings import this, never its files.
 */
export {Composer} from "./composer";
export {PromptSource} from "./logic/prompt_source";
export {ResourceSource} from "./logic/resource_source";
