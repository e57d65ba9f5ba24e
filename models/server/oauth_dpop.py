"""mcp.server, DPoP on its OAuth sign-in: the option, and what turning it on or off does to the
grants. The key pairs are the grants' (mcp.oauth.token `dpop_key`), the protocol is in
services/oauth/dpop.py."""

import logging

from odoo import fields, models

_logger = logging.getLogger(__name__)


class McpServer(models.Model):
    _inherit = "mcp.server"

    oauth_dpop = fields.Boolean(
        string="DPoP",
        help="Bind this server's tokens to a key pair Odoo makes for each sign-in and keeps secret (DPoP, RFC 9449): "
        "a token copied from Odoo is useless without that key. Turn it on when the server's provider offers DPoP "
        "(its metadata lists dpop_signing_alg_values_supported) or asks for it. Turning it on or off signs everyone "
        "out of this server: each sign-in is made again, bound (or not) to a key.",
    )

    def write(self, vals):
        changed = self.filtered(lambda s: "oauth_dpop" in vals and s.oauth_dpop != bool(vals["oauth_dpop"]))
        result = super().write(vals)
        if changed and not self.env.context.get("ai_mcp_keep_state"):
            # a grant's tokens are bound to its key or to none: the other kind needs a new sign-in
            # sudo: every user's grant of the server goes, not only those the writer may read
            grants = self.env["mcp.oauth.token"].sudo().search([("server_id", "in", changed.ids)])
            _logger.info("DPoP turned on or off, grants dropped: servers=%s grants=%d", changed.ids, len(grants))
            grants.unlink()
            changed._close_sessions()
        return result
