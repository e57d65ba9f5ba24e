/** @odoo-module */
/**
 * The schema form wing's face: the form a JSON Schema describes and the hook that keeps its
 * values, for the forms of other wings (a tool's arguments, a prompt's, a server's question).
 * Other wings import this, never its files.
 */
export {SchemaFormNode} from "./schema_form";
export {useSchemaForm} from "./use_schema_form";
