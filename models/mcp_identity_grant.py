"""mcp.identity.grant: a user's sign-in at her company's identity provider (mcp.identity.provider),
made once from Odoo: her ID token, exchanged at the provider for each server she uses, and the
refresh token that renews it. Both are write-only encrypted secrets (ai.secret.mixin); the model has
no access rights at all, as mcp.oauth.token: only the code that signs her in and connects for her
reads a row, as superuser.

The ID token is renewed under a lock of its row (`_renew`): providers rotate refresh tokens, and one
spent twice by two of her turns at once would be refused."""

import asyncio
import logging

from psycopg2.errors import SerializationFailure
from pydantic import SecretStr

from odoo import SUPERUSER_ID, api, fields, models
from odoo.tools import SQL

from ..odoo_compat import Constraint
from ..services.errors import ErrorCode, OAuthError
from ..services.oauth import IdentityTokens, identity_required, refresh_identity
from .server.mcp_oauth_token import RENEW_ATTEMPTS, from_epoch, to_epoch

_logger = logging.getLogger(__name__)


class McpIdentityGrant(models.Model):
    _name = "mcp.identity.grant"
    _description = "Sign-in at a Company Identity Provider"
    _inherit = ["ai.secret.mixin"]
    _secret_fields = ("id_token", "refresh_token")

    provider_id = fields.Many2one("mcp.identity.provider", required=True, ondelete="cascade", index=True)
    user_id = fields.Many2one("res.users", required=True, ondelete="cascade", index=True)
    subject = fields.Char(help="Who the provider says she is (the ID token's sub).")
    email = fields.Char()
    expires_at = fields.Datetime(help="When her ID token expires; it is renewed with the refresh token before.")
    signed_in_at = fields.Datetime()

    id_token = fields.Char(compute="_compute_id_token", inverse="_inverse_id_token", copy=False)
    id_token_set = fields.Boolean(compute="_compute_secrets_set")
    refresh_token = fields.Char(compute="_compute_refresh_token", inverse="_inverse_refresh_token", copy=False)
    refresh_token_set = fields.Boolean(compute="_compute_secrets_set")

    _provider_user_uniq = Constraint("unique(provider_id, user_id)", "A user signs in to a provider once.")

    def _compute_id_token(self):
        self._secret_compute("id_token")

    def _inverse_id_token(self):
        self._secret_inverse("id_token")

    def _compute_refresh_token(self):
        self._secret_compute("refresh_token")

    def _inverse_refresh_token(self):
        self._secret_inverse("refresh_token")

    @api.model
    def _of(self, provider, user):
        """`user`'s sign-in at `provider`; empty when there is none."""
        # sudo: the model has no access rights; only the code that signs in and connects reads it
        return self.sudo().search([("provider_id", "=", provider.id), ("user_id", "=", user.id)], limit=1)

    def _status(self):
        self.ensure_one()
        since = fields.Datetime.context_timestamp(self, self.signed_in_at).strftime("%Y-%m-%d %H:%M")
        return self.env._("Signed in as %(who)s since %(when)s", who=self.email or self.subject or "?", when=since)

    def _tokens(self):
        self.ensure_one()
        id_token = self._secret_value("id_token")
        if not id_token:
            return None
        refresh = self._secret_value("refresh_token")
        return IdentityTokens(
            id_token=SecretStr(id_token),
            refresh_token=SecretStr(refresh) if refresh else None,
            expires_at=to_epoch(self.expires_at),
            subject=self.subject or None,
            email=self.email or None,
        )

    @api.model
    def _store(self, provider, user, tokens, signed_in=False):
        """Create or replace `user`'s sign-in at `provider`."""
        values = _values(tokens)
        if signed_in:
            values["signed_in_at"] = fields.Datetime.now()
        grant = self._of(provider, user)
        if grant:
            if tokens.refresh_token is None:
                grant._secret_clear("refresh_token")
            grant.write(values)
            return grant
        # sudo: as in _of, nobody has rights on the model
        return self.sudo().create({"provider_id": provider.id, "user_id": user.id, **values})

    def _renew(self, renewing):
        """Lock this row, read it again and store what `renewing(tokens as stored)` returns (the same
        ones: nothing written). Returns the tokens as then stored; None when there is no sign-in."""
        if not self:
            return None
        self.ensure_one()
        self.env.flush_all()
        # a serialization failure here is expected, and handled by the caller: not a bad query to log
        lock = SQL("SELECT id FROM %s WHERE id = %s FOR UPDATE", SQL.identifier(self._table), self.id)
        self.env.cr.execute(lock, log_exceptions=False)
        if not self.env.cr.fetchone():
            return None
        self.invalidate_recordset()
        stored = self._tokens()
        if stored is None:
            return None
        kept = renewing(stored)
        if kept is not stored:
            if kept.refresh_token is None:
                self._secret_clear("refresh_token")
            self.write(_values(kept))
        return kept


def _values(tokens):
    values = {
        "id_token": tokens.id_token.get_secret_value(),
        "expires_at": from_epoch(tokens.expires_at),
        "subject": tokens.subject or False,
        "email": tokens.email or False,
    }
    if tokens.refresh_token is not None:
        values["refresh_token"] = tokens.refresh_token.get_secret_value()
    return values


class NoIdentity:
    """services.oauth.enterprise.IdentitySource of a user the provider cannot vouch for: `message`
    says why, before anything is sent."""

    def __init__(self, message):
        self.message = message

    async def id_token(self):
        raise OAuthError(ErrorCode.OAUTH_TOKEN_ERROR, self.message, field="oauth_identity_provider_id")


class OdooIdentity:
    """services.oauth.enterprise.IdentitySource over mcp.identity.grant: the user's current ID token,
    renewed first when about to expire. A turn runs outside the request's transaction: each access
    opens its own cursor, off the hub's loop; the provider is called on the loop, the row locked
    meanwhile."""

    def __init__(self, registry, provider, spec, http, user_id):
        self.registry = registry
        self.provider_id = provider.id
        self.spec = spec
        self.http = http
        self.user_id = user_id

    async def id_token(self):
        loop = asyncio.get_running_loop()

        def renewing(stored):
            if not stored.expiring():
                return stored
            return asyncio.run_coroutine_threadsafe(refresh_identity(self.spec, stored, self.http), loop).result()

        tokens = await asyncio.to_thread(self._renew_locked, renewing)
        if tokens is None:
            raise identity_required(self.spec, "she has not signed in to it from Odoo yet")
        return tokens.id_token

    def _renew_locked(self, renewing):
        for attempt in range(RENEW_ATTEMPTS):
            try:
                return self._run(lambda grant: grant._renew(renewing))
            except SerializationFailure:
                if attempt == RENEW_ATTEMPTS - 1:
                    raise
                _logger.info("Identity sign-in renewed by another turn meanwhile, read again: user=%s", self.user_id)
            except OAuthError as exc:
                if exc.code is ErrorCode.OAUTH_IDENTITY_REQUIRED:
                    # the provider no longer renews it: forgotten, so that her next sign-in starts afresh
                    self._run(lambda grant: grant.unlink())
                raise
        return None

    def _run(self, action):
        with self.registry.cursor() as cr:
            env = api.Environment(cr, SUPERUSER_ID, {})
            grants = env["mcp.identity.grant"]
            grant = grants.search([("provider_id", "=", self.provider_id), ("user_id", "=", self.user_id)], limit=1)
            return action(grant)
