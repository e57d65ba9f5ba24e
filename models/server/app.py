"""mcp.server, what its MCP Apps may do: whether the chat shows them at all, and which of the
browser's powers an app that asks for them is granted. Kept apart from the connection settings
(mcp_server.py)."""

from odoo import fields, models

# what an app asks for in its resource's `_meta.ui.permissions`, and the setting that grants it
PERMISSION_FIELDS = {
    "camera": "app_allow_camera",
    "microphone": "app_allow_microphone",
    "geolocation": "app_allow_geolocation",
    "clipboardWrite": "app_allow_clipboard_write",
}


class McpServer(models.Model):
    _inherit = "mcp.server"

    apps_enabled = fields.Boolean(
        string="Apps",
        default=True,
        help="Show the interactive apps of this server's tools in the chat. Off: the server is not told that the "
        "chat can show apps, and its tools answer as text only.",
    )
    app_allow_camera = fields.Boolean(
        string="Camera", help="An app of this server that asks for the camera may ask the user for it."
    )
    app_allow_microphone = fields.Boolean(
        string="Microphone", help="An app of this server that asks for the microphone may ask the user for it."
    )
    app_allow_geolocation = fields.Boolean(
        string="Location", help="An app of this server that asks for the user's location may ask the user for it."
    )
    app_allow_clipboard_write = fields.Boolean(
        string="Clipboard", default=True, help="An app of this server that asks to write to the clipboard may do so."
    )

    def _app_permissions_granted(self, requested):
        """The permissions (`_meta.ui.permissions` names: camera, microphone, geolocation,
        clipboardWrite) an app of this server that asks for `requested` gets: those it asks for
        that the server's settings allow, in that order. An app never gets one it did not ask for."""
        self.ensure_one()
        server = self.sudo()
        asked = set(requested or ())
        return [name for name, fname in PERMISSION_FIELDS.items() if name in asked and server[fname]]
