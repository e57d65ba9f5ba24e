// ESLint for the widget and its tests: ESLint's recommended rules plus the stricter ones OCA's
// 18.0 template turns on, with the globals an Odoo 18 backend bundle and node's test runner have.
const globals = require("globals");
const js = require("@eslint/js");

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
    {ignores: ["node_modules/**", ".venv/**", "static/lib/**"]},
];
