"""Sign-ins between the redirect to the provider and its callback. Each is found by a hash of its
`state`, belongs to the user and browser session that started it, is used once (removed when its
callback arrives, whatever the outcome) and expires. What the callback needs in clear (the PKCE
verifier) is an encrypted secret. No access rights: only the sign-in routes read it, as superuser."""

import hashlib
import json
from datetime import timedelta

from odoo import api, fields, models

from ...odoo_compat import Constraint
from ...services.errors import ErrorCode, OAuthError
from ...services.oauth import PENDING_LIFETIME, PendingAuthorization


def digest(value):
    return hashlib.sha256((value or "").encode()).hexdigest()


class McpOauthPending(models.Model):
    _name = "mcp.oauth.pending"
    _description = "MCP Server OAuth Sign-in in Progress"
    _inherit = ["ai.secret.mixin"]
    _secret_fields = ("authorization",)

    state_hash = fields.Char(required=True, index=True)
    session_hash = fields.Char(required=True)
    # the sign-in is at a server's authorization server, or at a company's identity provider
    server_id = fields.Many2one("mcp.server", ondelete="cascade")
    identity_provider_id = fields.Many2one("mcp.identity.provider", ondelete="cascade")
    user_id = fields.Many2one("res.users", required=True, ondelete="cascade")
    owner_id = fields.Many2one(
        "res.users", ondelete="cascade", help="Whose grant the sign-in makes; empty: the shared one."
    )
    conversation_id = fields.Many2one("ai.conversation", ondelete="set null")
    expires_at = fields.Datetime(required=True)
    authorization = fields.Text(compute="_compute_authorization", inverse="_inverse_authorization", copy=False)
    authorization_set = fields.Boolean(compute="_compute_secrets_set")

    _state_hash_uniq = Constraint("unique(state_hash)", "A sign-in state is used once.")

    def _compute_authorization(self):
        self._secret_compute("authorization")

    def _inverse_authorization(self):
        self._secret_inverse("authorization")

    @api.model
    def _begin(self, server, pending, session_id, owner, conversation=None, identity_provider=None):
        # expired sign-ins of anyone go with each new one: nothing else needs them
        self.sudo().search([("expires_at", "<", fields.Datetime.now())]).unlink()
        return self.sudo().create(
            {
                "state_hash": digest(pending.state),
                "session_hash": digest(session_id),
                "server_id": server.id if server else False,
                "identity_provider_id": identity_provider.id if identity_provider else False,
                "user_id": self.env.uid,
                "owner_id": owner.id if owner else False,
                "conversation_id": conversation.id if conversation else False,
                "expires_at": fields.Datetime.now() + timedelta(seconds=PENDING_LIFETIME),
                # pydantic writes a SecretStr masked: the verifier and the DPoP key are put back in
                # clear, then encrypted
                "authorization": json.dumps(
                    {
                        **pending.model_dump(mode="json"),
                        "code_verifier": pending.code_verifier.get_secret_value(),
                        "dpop_key": pending.dpop_key.get_secret_value() if pending.dpop_key else None,
                    }
                ),
            }
        )

    @api.model
    def _take(self, state, session_id):
        """The sign-in a callback answers, removed so that it cannot be used twice; with its
        PendingAuthorization. Raises OAuthError(OAUTH_STATE_INVALID) for a state that is unknown,
        used, expired, or another user's or another browser session's."""
        record = self.sudo().search([("state_hash", "=", digest(state))], limit=1) if state else self.sudo()
        if not record:
            raise OAuthError(ErrorCode.OAUTH_STATE_INVALID)
        if record.user_id.id != self.env.uid or record.session_hash != digest(session_id):
            # not removed: the sign-in stays usable by the user who started it
            raise OAuthError(
                ErrorCode.OAUTH_STATE_INVALID, "This sign-in was started by another user or in another browser session."
            )
        pending = PendingAuthorization.model_validate_json(record._secret_value("authorization"))
        values = {
            "server": record.server_id,
            "identity_provider": record.identity_provider_id,
            "owner": record.owner_id,
            "conversation": record.conversation_id,
        }
        record.unlink()
        return pending, values
