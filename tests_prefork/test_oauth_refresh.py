"""A shared OAuth grant refreshed by two Odoo worker processes at once, in a real prefork Odoo 18
(--workers=2), against the real OAuth test server, whose refresh tokens rotate.

Two "Test connection" requests on a server signed in with a shared grant whose token has expired:
the first worker's refresh is held at the provider until the second worker waits for the grant's
row, so both need a refresh at the same moment. One refresh reaches the provider; the second
worker uses what the first stored, and the grant stays signed in.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from testing.oauth_server import OAuthServer  # noqa: E402
from testing.odoo_http import OdooNotFound, OdooServer, WebClient  # noqa: E402
from testing.prerequisites import missing  # noqa: E402

WORKERS = 2
WAIT = 60
WAITING_FOR_A_LOCK = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
)


@pytest.fixture(scope="module")
def odoo() -> Iterator[dict]:
    try:
        server = OdooServer("prefork-oauth")
    except OdooNotFound as exc:
        missing(str(exc))
    with OAuthServer(name="notes") as oauth:
        try:
            server.install()
            server.start("prefork", workers=WORKERS)
            admin = WebClient(server.url, server.db, "admin", "admin")
            yield {"server": server, "admin": admin, "oauth": oauth}
        finally:
            errors = server.log_errors()
            server.close()
    assert not errors, f"ERROR lines in the Odoo log: {errors[:3]}"


def _sql(odoo: dict, query: str) -> str:
    command = ["psql", "-X", "-At", "-d", odoo["server"].db, "-c", query]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _sign_in(odoo: dict, server_id: int) -> None:
    """The manager's sign-in as the browser does it: Odoo's start route, the provider's consent, Odoo's callback."""
    admin: WebClient = odoo["admin"]
    conn = admin.connection()
    conn.request("GET", f"/ai_mcp/oauth/start?server_id={server_id}", headers={"Cookie": admin.cookie})
    response = conn.getresponse()
    response.read()
    conn.close()
    assert response.status == 303, response.status
    back = urlsplit(odoo["oauth"].consent(response.getheader("Location"), user="manager"))
    status, body = admin.get(f"{back.path}?{back.query}")
    assert status == 200 and "You are signed in to Notes" in body, body[:500]


def test_two_workers_refreshing_one_shared_grant_make_one_refresh(odoo: dict) -> None:
    admin: WebClient = odoo["admin"]
    oauth: OAuthServer = odoo["oauth"]
    server_id = admin.call(
        "mcp.server",
        "create",
        {
            "name": "Notes",
            "scope": "system",
            "url": oauth.url,
            "auth_type": "oauth",
            "oauth_token_scope": "shared",
        },
    )
    _sign_in(odoo, server_id)
    # the grant's access token has expired: whoever uses it next refreshes it first
    _sql(odoo, "UPDATE mcp_oauth_token SET expires_at = (now() at time zone 'utc') - interval '1 hour'")
    hold = oauth.switches.hold_refresh = threading.Event()
    results: dict[str, dict] = {}

    def test_connection(name: str) -> None:
        try:
            results[name] = admin.call("mcp.server", "action_test_connection", [server_id])
        except RuntimeError as exc:
            results[name] = {"error": str(exc)}

    first, second = (threading.Thread(target=test_connection, args=(name,)) for name in ("first", "second"))
    first.start()
    try:
        assert oauth.provider.refresh_arrived.acquire(timeout=WAIT), "the first worker never refreshed"
        second.start()
        # the second worker waits for the grant's row (or, without the lock, reaches the provider too)
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and oauth.provider.refresh_requests < 2:
            if _sql(odoo, WAITING_FOR_A_LOCK) != "0":
                break
            time.sleep(0.1)
    finally:
        hold.set()
    for thread in (first, second):
        if thread.is_alive() or thread.ident:
            thread.join(WAIT)

    outcomes = {name: result["params"]["type"] if "params" in result else result for name, result in results.items()}
    assert outcomes == {"first": "success", "second": "success"}, results
    assert oauth.provider.refresh_requests == 1
    assert _sql(odoo, f"SELECT count(*) FROM mcp_oauth_token WHERE server_id = {server_id}") == "1", "the grant is kept"
    # and it is the renewed one, good for another call without a sign-in or a refresh
    again = admin.call("mcp.server", "action_test_connection", [server_id])
    assert again["params"]["type"] == "success", again
    assert oauth.provider.refresh_requests == 1
