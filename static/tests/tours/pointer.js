/** @odoo-module */
/**
 * The mouse pointer over an element, as a user's (:hover, which no script can set): the test moves
 * the browser's pointer when asked (tests/browser.py browser_prepared(pointer=True)).
 */

const POINTER = "ai_mcp: pointer at ";

/** The steps that put the pointer over `trigger`, and wait until the page has it hovered. */
export function hovered(trigger, content) {
    return [
        {
            content: `point at ${content}`,
            trigger,
            run() {
                const box = this.anchor.getBoundingClientRect();
                const at = {x: box.left + box.width / 2, y: box.top + box.height / 2};
                // eslint-disable-next-line no-console
                console.log(POINTER + JSON.stringify(at));
            },
        },
        {content: `${content}, hovered`, trigger: `${trigger}:hover`},
    ];
}
