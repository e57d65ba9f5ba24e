"""mcp.server: the spec the hub connects with, built from the record with its secrets decrypted."""

from datetime import timezone

from odoo import models

from ...services.env_vars import parse_env_json
from ...services.errors import ConfigError, _lt
from ...services.http_validation import parse_headers_json
from ...services.server_spec import build_server_spec
from ...services.url_guard import check_public_url
from .mcp_server import ALLOW_STDIO_PARAM


class McpServer(models.Model):
    _inherit = "mcp.server"

    def _server_key(self):
        """The pool key: stable for the record, distinct across databases served by one process."""
        self.ensure_one()
        return f"{self.env.cr.dbname}/mcp.server/{self._origin.id or self.id}"

    def _server_spec(self):
        """The hub's ServerSpec for this server, secrets decrypted. Raises ConfigError (also when a
        user URL now resolves to a forbidden address, or stdio servers were turned off)."""
        self.ensure_one()
        server = self.sudo()
        transport = server.transport
        if transport == "stdio":
            if server.scope != "system":
                raise ConfigError(
                    "transport", _lt("Only system servers may run over stdio. Choose streamable HTTP or SSE.")
                )
            if not self._stdio_enabled():
                raise ConfigError(
                    "transport",
                    _lt(
                        "stdio servers are turned off. "
                        "A system administrator can allow them with the system parameter %(param)s."
                    ),
                    param=ALLOW_STDIO_PARAM,
                )
        elif server.scope == "user":
            check_public_url(server.url, self._allowed_hosts())
        token = server._secret_value("api_key") if server.auth_type in ("bearer", "api_key") else None
        headers = {}
        if server.auth_type == "headers":
            headers = parse_headers_json(server._secret_value("headers") or "{}")
        env = {}
        if transport == "stdio":
            env = parse_env_json(server._secret_value("env_vars") or "{}")
        return build_server_spec(
            key=server._server_key(),
            name=server.name,
            transport=transport,
            url=server.url if transport not in ("stdio", "odoo") else None,
            auth_type=server.auth_type,
            token=token or None,
            api_key_header=(server.api_key_header or "X-API-Key").strip(),
            headers=headers,
            connect_timeout=server.connect_timeout,
            call_timeout=server.call_timeout,
            call_time_cap=server.call_time_cap,
            question_timeout=server.question_timeout,
            command=server.command if transport == "stdio" else None,
            args=tuple(server._arg_list()) if transport == "stdio" else (),
            env=env,
            cwd=(server.cwd or None) if transport == "stdio" else None,
            memory_limit_mb=(server.memory_limit_mb or None) if transport == "stdio" else None,
            public_only=server.scope == "user",
            allowed_hosts=tuple(h.strip() for h in self._allowed_hosts() if h.strip()),
            log_level=server.log_level or None,
            apps=server.apps_enabled,
            sampling=server.sampling_enabled,
            saved_at=server.write_date.replace(tzinfo=timezone.utc).timestamp() if server.write_date else None,
            # a per-user grant's sessions are the user's own: the pool keys them by token owner
            token_owner=str(self.env.uid)
            if server.auth_type == "oauth" and server.oauth_token_scope == "user"
            else None,
        )
