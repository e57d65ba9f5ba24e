/** @odoo-module */
import {Component} from "@odoo/owl";
import {Dialog} from "@web/core/dialog/dialog";
import {_t} from "@web/core/l10n/translation";

/**
 * An app asks to call a tool that needs the user's approval: allow this call, every call of the
 * tool this app makes in the conversation, every call of it in the conversation (the model's too),
 * or deny. The calls of the same tool the app made meanwhile wait for this one answer
 * (common/approval_gate.js): "Allow once" runs those with the same arguments, the others ask
 * after it. Closing the dialog denies.
 */
export class AppApprovalDialog extends Component {
    static template = "ai_mcp.AppApprovalDialog";
    static components = {Dialog};
    static props = {
        app: String,
        tool: Object, // {name, title?, description?}
        arguments: String,
        choose: Function,
        close: Function,
    };

    setup() {
        this.title = _t("Allow this tool call?");
    }

    get question() {
        const tool = this.props.tool.title || this.props.tool.name;
        // an app is named after its tool: the app of a tool calling that tool is not named twice
        if (tool === this.props.app) {
            return _t("This app wants to call its own tool, %(tool)s.", {tool});
        }
        return _t("%(app)s wants to call %(tool)s.", {app: this.props.app, tool});
    }

    choose(choice) {
        this.props.choose(choice);
        this.props.close();
    }
}
