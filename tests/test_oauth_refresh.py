"""Refreshing one OAuth grant from two transactions at once, as two Odoo workers do, against the
real test server, whose refresh tokens rotate: one refresh reaches the provider, the other holder
waits for the grant's row and uses what the first stored, and nobody has to sign in again.

The records are committed (and removed afterwards) through cursors of their own: what is tested is
two transactions locking one row, which the test's single transaction cannot show."""

import asyncio
import json
import threading
import time
from urllib.parse import parse_qsl, urlsplit

from odoo import SUPERUSER_ID, api
from odoo.modules.registry import DummyRLock, Registry
from odoo.tests import TransactionCase, tagged

from odoo.addons.ai_mcp.hub_process import process_hub
from odoo.addons.ai_mcp.models.server.oauth import CALLBACK_PATH
from odoo.addons.ai_mcp.services.errors import ErrorCode, OAuthError
from odoo.addons.ai_mcp.services.oauth import GuardedHttp, discover
from odoo.addons.ai_mcp.services.oauth import client as oauth_client
from odoo.addons.ai_mcp.testing.oauth_server import OAuthServer, Switches

# a lifetime inside the refresh tolerance (60 s): every holder finds the token expiring
SHORT = 30
WAIT = 30


@tagged("post_install", "-at_install")
class TestOAuthConcurrentRefresh(TransactionCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # Odoo's test runner holds the registries' lock while tests run, and a thread opening an
        # environment on a cursor of its own waits for it: set it aside, as HttpCase's test mode does
        held, Registry._lock = Registry._lock, DummyRLock()
        cls.addClassCleanup(setattr, Registry, "_lock", held)

    def setUp(self):
        super().setUp()
        self.oauth = OAuthServer(name="notes", switches=Switches(token_lifetime=SHORT)).start()
        self.addCleanup(self.oauth.stop)
        self.hub = process_hub()
        with self.committed() as env:
            server = env["mcp.server"].create(
                {
                    "name": "Shared notes",
                    "scope": "system",
                    "url": self.oauth.url,
                    "auth_type": "oauth",
                    "oauth_token_scope": "shared",
                }
            )
            self.server_id = server.id
            self.tokens = self.sign_in(server)
            env["mcp.oauth.token"]._store(server, False, self.tokens)
        self.addCleanup(self.remove_server)

    def committed(self):
        """An environment on a cursor of its own, committed when the block ends."""
        registry = self.registry

        class Committed:
            def __enter__(inner):
                inner.cr = registry.cursor()
                return api.Environment(inner.cr, SUPERUSER_ID, {})

            def __exit__(inner, kind, value, tb):
                if kind is None:
                    inner.cr.commit()
                inner.cr.close()

        return Committed()

    def remove_server(self):
        with self.committed() as env:
            env["mcp.server"].browse(self.server_id).unlink()

    def sign_in(self, server):
        """Register Odoo and sign in at the provider as the server's form does, consent included."""
        http = GuardedHttp(["127.0.0.1"])
        run = self.hub.run
        discovery = run(discover(self.oauth.url, http))
        redirect = server._oauth_url(CALLBACK_PATH)
        registration = run(oauth_client.register(discovery, http, redirect, "Odoo"))
        server.oauth_registration = json.dumps(
            {
                "client": {**registration.model_dump(mode="json"), "client_secret": registration.secret()},
                "token_endpoint": discovery.endpoint("token_endpoint"),
                "revocation_endpoint": discovery.endpoint("revocation_endpoint"),
                "resource": discovery.resource,
            }
        )
        url, pending = run(oauth_client.start_authorization(discovery, registration, http))
        code = oauth_client.read_callback(dict(parse_qsl(urlsplit(self.oauth.consent(url)).query)), pending)
        return run(oauth_client.exchange_code(code, pending, registration, http))

    def stored(self):
        with self.committed() as env:
            grant = env["mcp.oauth.token"]._owned(self.server_id, False)
            return grant._token_set() if grant else None

    def waiting_for_a_row_lock(self):
        with self.committed() as env:
            env.cr.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            return env.cr.fetchone()[0]

    def test_a_sync_and_a_turn_refreshing_one_grant_at_once_make_one_refresh(self):
        hold = self.oauth.switches.hold_refresh = threading.Event()
        self.addCleanup(hold.set)
        results = {}

        def form_sync():
            # the server's form (Test, Sync): the request's own transaction, in this worker
            with self.committed() as env:
                server = env["mcp.server"].browse(self.server_id)
                results["sync"] = server._oauth_current_tokens(env.user)

        def turn():
            # a turn of another worker: its own store, its own transactions
            with self.committed() as env:
                source = env["mcp.server"].browse(self.server_id)._oauth_grant(env.user)
            results["turn"] = asyncio.run(source.current())

        first = threading.Thread(target=form_sync)
        first.start()
        self.assertTrue(self.oauth.provider.refresh_arrived.acquire(timeout=WAIT), "the sync never refreshed")
        second = threading.Thread(target=turn)
        second.start()
        # the turn waits for the grant's row, or (without the lock) has reached the provider too
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and self.oauth.provider.refresh_requests < 2:
            if self.waiting_for_a_row_lock():
                break
            time.sleep(0.05)
        hold.set()
        first.join(WAIT)
        second.join(WAIT)

        renewed = self.stored()
        self.assertIsNotNone(renewed, "the grant was kept")
        self.assertNotEqual(grant_of(renewed), grant_of(self.tokens))
        self.assertEqual(self.oauth.provider.refresh_requests, 1)
        self.assertEqual(
            [grant_of(results.get(who)) for who in ("sync", "turn")],
            [grant_of(renewed)] * 2,
            "both went on with the renewed grant",
        )

    def test_a_refused_spent_refresh_token_does_not_drop_the_grant_renewed_meanwhile(self):
        with self.committed() as env:
            source = env["mcp.server"].browse(self.server_id)._oauth_grant(env.user)
        renewed = asyncio.run(source.refresh(self.tokens))
        self.assertEqual(grant_of(self.stored()), grant_of(renewed))

        # a holder that read the grant before that refresh went to the provider with its refresh
        # token, spent by then, and was refused
        with self.assertRaises(OAuthError) as refused:
            self.hub.run(source.renew(self.tokens, self.tokens))
        self.assertIs(refused.exception.code, ErrorCode.OAUTH_REAUTH_REQUIRED)
        with self.committed() as env:
            kept = env["mcp.oauth.token"]._owned(self.server_id, False)._drop_refused(self.tokens)
        self.assertEqual(grant_of(kept), grant_of(renewed))
        self.assertEqual(grant_of(self.stored()), grant_of(renewed), "the grant renewed meanwhile is kept")

        # a refusal of the refresh token the grant holds does end it: a sign-in to do again
        self.oauth.provider.revoke_refresh_tokens()
        with self.assertRaises(OAuthError) as ended:
            asyncio.run(source.refresh(renewed))
        self.assertIs(ended.exception.code, ErrorCode.OAUTH_REAUTH_REQUIRED)
        self.assertIsNone(self.stored())


def grant_of(tokens):
    """What tells grants apart: the expiry is stored to the second, the tokens as they are."""
    return (tokens.access_token.get_secret_value(), tokens.refresh_token.get_secret_value()) if tokens else None
