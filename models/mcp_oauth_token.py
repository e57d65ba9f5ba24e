"""OAuth grants of MCP servers: one per server and user (a per-user server), or one per server
with no user (a shared server). Tokens are write-only encrypted secrets (ai.secret.mixin); the
model has no access rights at all, so nobody reads a row through the ORM, managers included: only
the code that connects does, as superuser (TokenStore)."""
import asyncio
import calendar
from datetime import datetime

from odoo import api, fields, models
from odoo.tools import SQL
from pydantic import SecretStr

from ..services.oauth_models import TokenSet


def to_epoch(value):
    return calendar.timegm(value.utctimetuple()) if value else None


def from_epoch(value):
    return datetime.utcfromtimestamp(value).replace(microsecond=0) if value else False


class McpOauthToken(models.Model):
    _name = "mcp.oauth.token"
    _description = "MCP Server OAuth Grant"
    _inherit = ["ai.secret.mixin"]
    _secret_fields = ("access_token", "refresh_token")

    server_id = fields.Many2one("mcp.server", required=True, ondelete="cascade", index=True)
    user_id = fields.Many2one("res.users", ondelete="cascade", index=True, help="Empty: the server's shared grant.")
    signed_in_by_id = fields.Many2one("res.users", ondelete="set null")
    scope = fields.Char(string="Granted Scopes")
    expires_at = fields.Datetime()
    refreshed_at = fields.Datetime(string="Last Refresh")
    signed_in_at = fields.Datetime()

    access_token = fields.Char(compute="_compute_access_token", inverse="_inverse_access_token", copy=False)
    access_token_set = fields.Boolean(compute="_compute_secrets_set")
    refresh_token = fields.Char(compute="_compute_refresh_token", inverse="_inverse_refresh_token", copy=False)
    refresh_token_set = fields.Boolean(compute="_compute_secrets_set")

    def init(self):
        super().init()
        # one grant per server and user, the shared one (no user) included: NULLs are not equal in a plain unique
        self.env.cr.execute(SQL(
            "CREATE UNIQUE INDEX IF NOT EXISTS mcp_oauth_token_owner_uniq ON mcp_oauth_token (server_id, COALESCE(user_id, 0))"
        ))

    def _compute_access_token(self):
        self._secret_compute("access_token")

    def _inverse_access_token(self):
        self._secret_inverse("access_token")

    def _compute_refresh_token(self):
        self._secret_compute("refresh_token")

    def _inverse_refresh_token(self):
        self._secret_inverse("refresh_token")

    # -- the grant as the services see it --------------------------------------------------------

    @api.model
    def _grant_of(self, server, user):
        """The grant `user` calls `server` with: the user's own for a per-user server, the shared
        one otherwise. An empty recordset when there is none."""
        return self._owned(server.id, server._oauth_owner(user))

    @api.model
    def _owned(self, server_id, owner_id):
        """The grant of `server_id` held by `owner_id` (False: the shared one)."""
        return self.sudo().search([("server_id", "=", server_id), ("user_id", "=", owner_id)], limit=1)

    def _token_set(self):
        self.ensure_one()
        access = self._secret_value("access_token")
        if not access:
            return None
        refresh = self._secret_value("refresh_token")
        return TokenSet(
            access_token=SecretStr(access),
            refresh_token=SecretStr(refresh) if refresh else None,
            expires_at=to_epoch(self.expires_at),
            scope=self.scope or None,
            obtained_at=to_epoch(self.refreshed_at) or 0.0,
        )

    @api.model
    def _store(self, server, owner_id, tokens, signed_in_by=None):
        """Create or replace the grant of `server` for `owner_id` (False: shared)."""
        grant = self._owned(server.id, owner_id)
        values = {
            "scope": tokens.scope or False,
            "expires_at": from_epoch(tokens.expires_at),
            "refreshed_at": from_epoch(tokens.obtained_at),
            "access_token": tokens.access_token.get_secret_value(),
        }
        if tokens.refresh_token is not None:
            values["refresh_token"] = tokens.refresh_token.get_secret_value()
        if signed_in_by is not None:
            values.update(signed_in_by_id=signed_in_by.id, signed_in_at=fields.Datetime.now())
        if grant:
            if tokens.refresh_token is None:
                grant._secret_clear("refresh_token")
            grant.write(values)
            return grant
        return self.sudo().create({"server_id": server.id, "user_id": owner_id, **values})


class OdooTokenStore:
    """services.oauth_tokens.TokenStore over mcp.oauth.token. A turn runs outside the request's
    transaction, often in another thread: every access opens its own cursor, off the hub's loop."""

    def __init__(self, registry, server_id, owner_id):
        self.registry = registry
        self.server_id = server_id
        self.owner_id = owner_id or False

    async def load(self):
        return await asyncio.to_thread(self._run, lambda grant, server: grant._token_set() if grant else None)

    async def save(self, tokens):
        await asyncio.to_thread(self._run, lambda grant, server: grant.env["mcp.oauth.token"]._store(server, self.owner_id, tokens))

    async def drop(self):
        await asyncio.to_thread(self._run, lambda grant, server: grant.unlink())

    def _run(self, action):
        with self.registry.cursor() as cr:
            env = api.Environment(cr, 1, {})
            server = env["mcp.server"].browse(self.server_id)
            grant = env["mcp.oauth.token"]._owned(self.server_id, self.owner_id)
            return action(grant, server)
