/** @odoo-module */
import {_t} from "@web/core/l10n/translation";

/**
 * The sentences the chat's helpers (static/src/chat/logic/) show the user, in the user's language: they
 * have no Odoo import, so the chat action hands them these as the store's `words`.
 */
export const chatWords = {
    /** The turn ended with `error` ({ code, status?, gaveUp?, started? }) the server did not word. */
    error(error) {
        if (error.code === "NETWORK_ERROR" && error.gaveUp) {
            return error.started
                ? _t(
                      "The connection to the server was lost and the answer could not be read again."
                  )
                : _t("The connection to the server was lost before the answer started.");
        }
        if (error.code === "NETWORK_ERROR") {
            return _t("The connection to the server was lost.");
        }
        if (error.code === "HTTP_ERROR" && error.status === 200) {
            return _t(
                "The server did not answer with a stream. Your session may have expired: reload the page."
            );
        }
        if (error.code === "HTTP_ERROR") {
            return _t("The server answered with an error (HTTP %(status)s).", {
                status: error.status,
            });
        }
        return _t("The request was refused (%(code)s).", {code: error.code});
    },
    interrupted: () => _t("This answer was interrupted before it finished."),
    notOpened: () => _t("This conversation could not be opened."),
    runsElsewhere: () =>
        _t(
            "This answer is still running elsewhere (another tab, or a server): stop it there. If that server stopped, the answer ends by itself within a few minutes."
        ),
    notStopped: (error) => _t("The call could not be stopped: %(error)s", {error}),
    appBusy: (app) =>
        _t(
            "%(app)s sent a message while the assistant was busy; it was not sent. Try again once the answer is finished.",
            {app}
        ),
};
