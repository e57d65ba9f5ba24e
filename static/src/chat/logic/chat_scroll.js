/** @odoo-module */
/**
 * How the chat keeps its last lines in view, with no Odoo import, tested by node
 * (static/tests/chat_scroll.test.mjs).
 */

/** How far from the bottom, in pixels, still counts as at the bottom. */
export const NEAR_BOTTOM_PX = 40;

/** Whether a scrolling view (scrollHeight, scrollTop, clientHeight) shows its bottom. */
export function nearBottom(view) {
    return view.scrollHeight - view.scrollTop - view.clientHeight < NEAR_BOTTOM_PX;
}

/**
 * Keeps a scrolling view at its bottom while what it shows changes (text streams in, an app's
 * frame grows or shrinks, the view itself is resized), as long as the user has not scrolled away
 * from the bottom; scrolling back there follows again.
 */
export class StickToBottom {
    constructor(view) {
        this.view = view;
        this.following = true;
    }

    /** The view scrolled (the user, or this): follow while it shows its bottom. */
    scrolled() {
        this.following = nearBottom(this.view);
    }

    /** What the view shows changed, or its size did: back to the bottom when following. */
    changed() {
        if (this.following) {
            this.view.scrollTop = this.view.scrollHeight;
        }
    }
}
