import assert from "node:assert/strict";
import {describe, test} from "node:test";

import {StickToBottom, nearBottom} from "../src/chat/logic/chat_scroll.js";

/** A scrolling view as the browser keeps it: scrollTop within 0 and scrollHeight - clientHeight. */
function view({content, height, top = 0}) {
    return {
        scrollHeight: content,
        clientHeight: height,
        _top: top,
        get scrollTop() {
            return this._top;
        },
        set scrollTop(value) {
            this._top = Math.max(0, Math.min(value, this.scrollHeight - this.clientHeight));
        },
    };
}

describe("nearBottom", () => {
    test("a view within 40 pixels of its bottom shows it", () => {
        assert.equal(nearBottom(view({content: 1000, height: 400, top: 600})), true);
        assert.equal(nearBottom(view({content: 1000, height: 400, top: 561})), true);
        assert.equal(nearBottom(view({content: 1000, height: 400, top: 560})), false);
        assert.equal(nearBottom(view({content: 300, height: 400})), true);
    });
});

describe("StickToBottom", () => {
    test("an app growing below the answer brings the answer back in view", () => {
        const chat = view({content: 1000, height: 400, top: 600});
        const stick = new StickToBottom(chat);
        stick.scrolled();
        chat.scrollHeight = 1400; // the app grew by 400 pixels: the answer is below the view
        assert.equal(nearBottom(chat), false);
        stick.changed();
        assert.equal(chat.scrollTop, 1000);
        assert.equal(nearBottom(chat), true);
    });

    test("a user who scrolled up stays where they are, and is followed again at the bottom", () => {
        const chat = view({content: 1000, height: 400, top: 600});
        const stick = new StickToBottom(chat);
        chat.scrollTop = 200;
        stick.scrolled();
        chat.scrollHeight = 1400;
        stick.changed();
        assert.equal(chat.scrollTop, 200, "reading above: not moved");
        chat.scrollTop = 1000;
        stick.scrolled();
        chat.scrollHeight = 1600;
        stick.changed();
        assert.equal(chat.scrollTop, 1200);
    });

    test("follows from the start, and when the content shrinks", () => {
        const chat = view({content: 1000, height: 400});
        const stick = new StickToBottom(chat);
        stick.changed();
        assert.equal(chat.scrollTop, 600);
        chat.scrollHeight = 800; // an app shrank: the view still shows its bottom
        chat.scrollTop = 600; // what the browser clamps it to
        stick.scrolled();
        chat.scrollHeight = 900;
        stick.changed();
        assert.equal(chat.scrollTop, 500);
    });
});
