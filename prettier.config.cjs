// OCA's prettier settings for Odoo 18.0 addons, at Odoo's own JavaScript width (4 spaces, 100 columns).
module.exports = {
    bracketSpacing: false,
    printWidth: 100,
    proseWrap: "always",
    semi: true,
    tabWidth: 4,
    trailingComma: "es5",
    xmlWhitespaceSensitivity: "strict",
    plugins: [require.resolve("@prettier/plugin-xml")],
};
