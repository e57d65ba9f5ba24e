/** @odoo-module */
/**
 * A tour step that checks the chat's colour contrast with axe-core (WCAG AA: 4.5 for text, 3 for
 * large text), which the test puts in the page (tests/browser.py browser_prepared(axe=True)).
 * App frames are not checked: an app's colours are its server's.
 */

export function contrastChecked(content) {
    return {
        content: `contrast: ${content}`,
        trigger: ".o_ai_chat",
        async run() {
            const axe = window.axe;
            if (!axe) {
                throw new Error("axe-core is not in the page: the test puts it there");
            }
            const {violations} = await axe.run(this.anchor, {
                runOnly: {type: "rule", values: ["color-contrast"]},
                resultTypes: ["violations"],
                iframes: false,
            });
            const nodes = violations.flatMap((violation) => violation.nodes);
            if (nodes.length) {
                const found = nodes.map(
                    (node) =>
                        `${node.target.join(" ")}: ${node.any.map((c) => c.message).join("; ")}`
                );
                throw new Error(
                    `${nodes.length} nodes lack contrast (${content}):\n${found.join("\n")}`
                );
            }
        },
    };
}
