/**
 * What the chat's question card sends for a server's form question, when the user accepts it as
 * shown: the card's own form logic (static/src/schema_form/logic), each field filled with its default. Used by
 * testing/conformance_client.py, which stands in for the user.
 *
 *   node testing/question_card.mjs '<requested schema as JSON>'
 *
 * Prints {"content": ...} (what the card sends), or {"problems": [...]} when the card would not
 * send the form as shown (a field the user has to fill in).
 */
import {compileSchema} from "../static/src/schema_form/logic/schema_fields.js";
import {collect, initialFormState} from "../static/src/schema_form/logic/schema_form_state.js";

const schema = JSON.parse(process.argv[2] || "{}");
const desc = compileSchema(Object.keys(schema).length ? schema : {type: "object", properties: {}});
const result = collect(desc, initialFormState(desc, {fillDefaults: true}));
const answer = result.errors.length
    ? {problems: result.errors.map((e) => `${e.path.join(".") || "answer"}: ${e.code}`)}
    : {content: result.value ?? {}};
process.stdout.write(JSON.stringify(answer));
