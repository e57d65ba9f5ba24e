import assert from "node:assert/strict";
import {existsSync, readdirSync, readFileSync} from "node:fs";
import {dirname, join, relative} from "node:path";
import {test} from "node:test";
import {fileURLToPath} from "node:url";

// Odoo loads the widget as one bundle and names each file @ai_mcp/<path under static/src>; an
// import of a name no file has fails only in the browser, where the whole client action then does
// not load. node's tests load the logic folders alone, so this checks every file's imports here.
const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "src");
const IMPORT = /\bimport\s[^;]*?from\s+"([^"]+)"|\bimport\s+"([^"]+)"/gs;

function sources(folder) {
    return readdirSync(folder, {withFileTypes: true}).flatMap((entry) => {
        const path = join(folder, entry.name);
        if (entry.isDirectory()) {
            return sources(path);
        }
        return entry.name.endsWith(".js") ? [path] : [];
    });
}

function resolves(file, name) {
    let base;
    if (name.startsWith("@ai_mcp/")) {
        base = join(SRC, name.slice("@ai_mcp/".length));
    } else if (name.startsWith(".")) {
        base = join(dirname(file), name);
    } else {
        return true; // Odoo's and OWL's modules: the bundle of each series has them
    }
    return [base, `${base}.js`, join(base, "index.js")].some((path) => existsSync(path));
}

test("every import of the widget's own modules names a file that exists", () => {
    const missing = [];
    for (const file of sources(SRC)) {
        for (const [, from, bare] of readFileSync(file, "utf8").matchAll(IMPORT)) {
            const name = from || bare;
            if (!resolves(file, name)) {
                missing.push(`${relative(SRC, file)} imports ${name}`);
            }
        }
    }
    assert.deepEqual(missing, []);
});
