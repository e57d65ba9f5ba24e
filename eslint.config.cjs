// ESLint for the widget and its tests: ESLint's recommended rules plus the stricter ones OCA's
// 18.0 template turns on, with the globals an Odoo 18 backend bundle and node's test runner have.
const globals = require("globals");
const js = require("@eslint/js");

// The widget's wings (docs/architecture.md "The chat widget"): each imports another only through
// that wing's face, its index.js (`@ai_mcp/<wing>`), never its files; all share common/.
const WINGS = ["chat", "apps", "composer", "schema_form"];
const NO_ODOO = {
    group: ["@odoo/**", "@web/**", "@mail/**", "@bus/**"],
    message:
        "a logic folder and common/ import no Odoo nor OWL: they run under node (static/tests); " +
        "inject what Odoo gives through the chat store's services",
};

/** The imports of another wing's files, by `@ai_mcp/<wing>/...` or by a relative path. */
function otherWings(wing) {
    const others = WINGS.filter((other) => other !== wing).join("|");
    return {
        regex: `^(@ai_mcp/(${others})/|\\.\\.?/(.*/)?(${others})(/|$))`,
        message:
            "a wing imports another wing only through its face (`@ai_mcp/<wing>`, its index.js), " +
            "and what crosses wings lives in common/",
    };
}

/** The rule for a wing's files, and for its logic/ folder the rule that it imports no Odoo. */
function wingRules(wing) {
    const restricted = (patterns) => ({"no-restricted-imports": ["error", {patterns}]});
    return [
        {files: [`static/src/${wing}/**/*.js`], rules: restricted([otherWings(wing)])},
        {
            files: [`static/src/${wing}/**/logic/**/*.js`],
            rules: restricted([otherWings(wing), NO_ODOO]),
        },
    ];
}

module.exports = [
    js.configs.recommended,
    {
        files: ["**/*.js", "**/*.mjs"],
        languageOptions: {
            ecmaVersion: "latest",
            sourceType: "module",
            globals: {...globals.browser, ...globals.node, odoo: "readonly", owl: "readonly"},
        },
        rules: {
            "no-console": "warn",
            "no-eval": "error",
            "no-implied-eval": "error",
            "no-var": "error",
            "prefer-const": "error",
            "no-unused-vars": ["error", {args: "none", ignoreRestSiblings: true}],
            eqeqeq: ["error", "smart"],
            curly: "error",
            "no-shadow": "error",
            "no-use-before-define": ["error", {functions: false, classes: false, variables: false}],
        },
    },
    ...WINGS.flatMap(wingRules),
    {
        files: ["static/src/common/**/*.js"],
        rules: {
            "no-restricted-imports": [
                "error",
                {
                    patterns: [
                        NO_ODOO,
                        {
                            regex: `^(@ai_mcp/(${WINGS.join("|")})(/|$)|\\.\\.?/(.*/)?(${WINGS.join("|")})(/|$))`,
                            message: "common/ is the wings' shared floor: it imports no wing",
                        },
                    ],
                },
            ],
        },
    },
    {ignores: ["node_modules/**", ".venv/**", "static/lib/**"]},
];
