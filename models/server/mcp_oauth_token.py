"""OAuth grants of MCP servers: one per server and user (a per-user server), or one per server
with no user (a shared server). Tokens are write-only encrypted secrets (ai.secret.mixin); the
model has no access rights at all, so nobody reads a row through the ORM, managers included: only
the code that connects does, as superuser (TokenStore).

A grant is refreshed under a lock of its row (`_renew`), so the holders of one grant in every
worker take turns: the refresh tokens of OAuth 2.1 rotate, and one spent twice is refused."""

import asyncio
import calendar
import logging
from datetime import datetime

from psycopg2.errors import SerializationFailure
from pydantic import SecretStr

from odoo import SUPERUSER_ID, api, fields, models
from odoo.tools import SQL

from ...services.oauth import TokenSet

_logger = logging.getLogger(__name__)

# A holder that waited for another one's refresh finds the row changed, which Odoo's repeatable
# read transactions refuse as a serialization failure: it starts again, and then reads the new
# tokens. Two or three holders of a grant at once are common; this many, not.
RENEW_ATTEMPTS = 8


def to_epoch(value):
    return calendar.timegm(value.utctimetuple()) if value else None


def from_epoch(value):
    return datetime.utcfromtimestamp(value).replace(microsecond=0) if value else False


class McpOauthToken(models.Model):
    _name = "mcp.oauth.token"
    _description = "MCP Server OAuth Grant"
    _inherit = ["ai.secret.mixin"]
    _secret_fields = ("access_token", "refresh_token", "dpop_key")

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
    # the private key (PEM) the tokens are bound to (DPoP); empty: bearer tokens
    dpop_key = fields.Text(string="DPoP Key", compute="_compute_dpop_key", inverse="_inverse_dpop_key", copy=False)
    dpop_key_set = fields.Boolean(string="DPoP Key Set", compute="_compute_secrets_set")

    def init(self):
        result = super().init()
        # one grant per server and user, the shared one (no user) included: NULLs are not equal in a plain unique
        self.env.cr.execute(
            SQL(
                "CREATE UNIQUE INDEX IF NOT EXISTS mcp_oauth_token_owner_uniq"
                " ON mcp_oauth_token (server_id, COALESCE(user_id, 0))"
            )
        )
        return result

    def _compute_access_token(self):
        self._secret_compute("access_token")

    def _inverse_access_token(self):
        self._secret_inverse("access_token")

    def _compute_refresh_token(self):
        self._secret_compute("refresh_token")

    def _inverse_refresh_token(self):
        self._secret_inverse("refresh_token")

    def _compute_dpop_key(self):
        self._secret_compute("dpop_key")

    def _inverse_dpop_key(self):
        self._secret_inverse("dpop_key")

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
        key = self._secret_value("dpop_key")
        return TokenSet(
            access_token=SecretStr(access),
            refresh_token=SecretStr(refresh) if refresh else None,
            token_type="DPoP" if key else "Bearer",
            dpop_key=SecretStr(key) if key else None,
            expires_at=to_epoch(self.expires_at),
            scope=self.scope or None,
            obtained_at=to_epoch(self.refreshed_at) or 0.0,
        )

    @api.model
    def _store(self, server, owner_id, tokens, signed_in_by=None):
        """Create or replace the grant of `server` for `owner_id` (False: shared)."""
        grant = self._owned(server.id, owner_id)
        values = _token_values(tokens)
        if signed_in_by is not None:
            values.update(signed_in_by_id=signed_in_by.id, signed_in_at=fields.Datetime.now())
        if grant:
            if tokens.refresh_token is None:
                grant._secret_clear("refresh_token")
            if tokens.dpop_key is None:
                grant._secret_clear("dpop_key")
            grant.write(values)
            return grant
        return self.sudo().create({"server_id": server.id, "user_id": owner_id, **values})

    def _renew(self, renewing):
        """Lock this grant's row for the rest of the transaction, read it again and store what
        `renewing(tokens as stored)` returns: other tokens are written, the same ones left as they
        are, None drops the grant if it still holds the refresh token `renewing` was given. Returns
        the grant's tokens as then stored, None when there is no grant (any more).

        Raises psycopg2's SerializationFailure when another transaction changed the row since this
        one began: a new transaction will see that change (OdooTokenStore starts again; a request
        is retried by Odoo)."""
        stored = self._locked_tokens()
        if stored is None:
            return None
        kept = renewing(stored)
        if kept is None:
            return self._drop_refused(stored)
        if kept is not stored:
            if kept.refresh_token is None:
                self._secret_clear("refresh_token")
            self.write(_token_values(kept))
        return kept

    def _drop_refused(self, refused):
        """Drop this grant if it still holds `refused`'s refresh token, which the provider refused
        (a compare and delete): a grant another holder renewed meanwhile is kept and returned."""
        stored = self._locked_tokens()
        if stored is None or stored.refresh_token != refused.refresh_token:
            return stored
        _logger.info("OAuth grant dropped, its refresh token refused: grant=%s server=%s", self.id, self.server_id.id)
        self.unlink()
        return None

    def _locked_tokens(self):
        """This grant's tokens as stored, its row locked until the transaction ends; None when it is gone."""
        if not self:
            return None
        self.ensure_one()
        self.env.flush_all()
        # a serialization failure here is expected, and handled by the caller: not a bad query to log
        lock = SQL("SELECT id FROM %s WHERE id = %s FOR UPDATE", SQL.identifier(self._table), self.id)
        self.env.cr.execute(lock, log_exceptions=False)
        found = self.env.cr.fetchone()
        self.invalidate_recordset()
        return self._token_set() if found else None


def _token_values(tokens):
    values = {
        "scope": tokens.scope or False,
        "expires_at": from_epoch(tokens.expires_at),
        "refreshed_at": from_epoch(tokens.obtained_at),
        "access_token": tokens.access_token.get_secret_value(),
    }
    if tokens.refresh_token is not None:
        values["refresh_token"] = tokens.refresh_token.get_secret_value()
    if tokens.dpop_key is not None:
        values["dpop_key"] = tokens.dpop_key.get_secret_value()
    return values


class OdooTokenStore:
    """services.oauth.tokens.TokenStore over mcp.oauth.token. A turn runs outside the request's
    transaction, often in another thread: every access opens its own cursor, off the hub's loop."""

    def __init__(self, registry, server_id, owner_id):
        self.registry = registry
        self.server_id = server_id
        self.owner_id = owner_id or False

    @property
    def key(self):
        return (self.registry.db_name, self.server_id, self.owner_id)

    async def load(self):
        return await asyncio.to_thread(self._run, lambda grant: grant._token_set() if grant else None)

    async def save(self, tokens):
        """Keep a company client's first token (services.oauth.machine.SavingTokenStore)."""
        return await asyncio.to_thread(self._save, tokens)

    def _save(self, tokens):
        with self.registry.cursor() as cr:
            env = api.Environment(cr, SUPERUSER_ID, {})
            server = env["mcp.server"].browse(self.server_id)
            env["mcp.oauth.token"]._store(server, self.owner_id, tokens)
        return tokens

    async def renew(self, renewal):
        # the row stays locked while the provider answers: the renewal runs on this loop, waited
        # for by the thread that holds the lock
        loop = asyncio.get_running_loop()

        def renewing(stored):
            return asyncio.run_coroutine_threadsafe(renewal(stored), loop).result()

        return await asyncio.to_thread(self.renew_locked, renewing)

    def renew_locked(self, renewing):
        """mcp.oauth.token._renew in a transaction of its own, committed before this returns."""
        for _attempt in range(RENEW_ATTEMPTS - 1):
            try:
                return self._run(lambda grant: grant._renew(renewing))
            except SerializationFailure:
                _logger.info(
                    "OAuth grant changed by another holder meanwhile, read again: server=%s owner=%s",
                    self.server_id,
                    self.owner_id,
                )
        return self._run(lambda grant: grant._renew(renewing))

    def _run(self, action):
        with self.registry.cursor() as cr:
            env = api.Environment(cr, SUPERUSER_ID, {})
            return action(env["mcp.oauth.token"]._owned(self.server_id, self.owner_id))
