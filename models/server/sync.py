"""mcp.server, its connection and tool sync: connecting afresh, recording the outcome on the
record, and bringing its mcp.tool records in line with what the server lists (by hand and by the
daily cron). Kept apart from the configuration (mcp_server.py), which it only reads."""

import logging

from odoo import _, api, fields, models
from odoo.modules import module as odoo_module

from ...hub_process import process_hub
from ...notify import config_error_text, error_text, notification
from ...odoo_compat import cron_progress
from ...services.errors import AiMcpError, AuthRequired, ConfigError, ErrorCode, McpError
from ...services.mcp import connect_all, stderr_tail, telling_line

_logger = logging.getLogger(__name__)


def write_changed(record, values):
    """Write those of `values` that differ from `record`'s; whether any did. A server lists all
    its tools and skills again at each sync, some on every connection: what it repeats unchanged
    is not rewritten, nor counted as updated."""
    changed = {name: value for name, value in values.items() if record[name] != value}
    if changed:
        record.write(changed)
    return bool(changed)


class McpServer(models.Model):
    _inherit = "mcp.server"

    # -- connect and sync ------------------------------------------------------------------------

    def _connect(self):
        """Connect afresh and list the tools: a hub ConnectionReport. Raises AiMcpError."""
        self.ensure_one()
        hub = process_hub()
        spec, granted = self._oauth_bearing()
        try:
            # with the grant: a step-up for scopes it holds is refused as such, as in a turn
            return hub.run(hub.atest_connection(spec, granted))
        except AuthRequired:
            if not self._oauth_by_itself():
                raise
        # a token Odoo got by itself refused: a new one, once; then a sentence for the admin, never a
        # sign-in nobody could make
        renewed = self._oauth_fetched_tokens(self.env.user, refused=granted)
        spec = spec.model_copy(update={"token": renewed.access_token, "dpop_key": renewed.dpop_key})
        try:
            return hub.run(hub.atest_connection(spec, renewed))
        except AuthRequired as exc:
            raise self._oauth_grant(self.env.user).refusal(spec, renewed, exc) from None

    def _record_success(self, report, synced=False):
        values = {
            "state": "connected",
            "last_error": False,
            "last_error_code": False,
            "last_latency_ms": report.latency_ms,
            "server_name": report.server.name,
            "server_version": report.server.version,
            "protocol_version": report.server.protocol_version,
            "server_icon": report.server.icon or False,
            "last_stderr": stderr_tail(report.stderr_tail) or False,
        }
        if synced:
            values["last_sync"] = fields.Datetime.now()
        self.with_context(ai_mcp_keep_state=True).write(values)

    def _record_error(self, error):
        values = {
            "state": "error",
            "last_error": config_error_text(self, error) if isinstance(error, ConfigError) else error.message,
            "last_error_code": error.code.value,
        }
        if _output(error):
            values["last_stderr"] = _output(error)
        self.with_context(ai_mcp_keep_state=True).write(values)

    def _failure_text(self, error):
        """What the admin reads of a failed connection: the error, then what a stdio server wrote
        to its standard error last (the form's Output tab keeps it too)."""
        # _() and not self.env._ here and in _sync_tools, _apply_tools: the daily cron runs them in an
        # environment without a language, where _() falls back to the cron user's and env._ to English
        text = error_text(error, self)
        if _output(error):
            # the line that says why first: a crash's last line is seldom it (Node's is its version)
            last = telling_line(_output(error).splitlines())
            text = f"{text}\n" + _("Last output: %s", last) + "\n" + _("Its output (stderr):") + f"\n{_output(error)}"
        return text

    def _connect_all(self):
        """{server id: ConnectionReport, or the exception its connection raised} for these
        servers, connected concurrently (services/mcp/sync.py): a sync of many servers waits about as
        long as the slowest, not the sum."""
        outcomes, specs, grants = {}, {}, {}
        for server in self:
            try:
                specs[server.id], grant = server._oauth_bearing()
            except Exception as exc:  # noqa: BLE001 - raised again by _sync_tools, where each server's failure is handled
                outcomes[server.id] = exc
                continue
            if grant is not None:
                grants[specs[server.id].key] = grant
        connected = connect_all(process_hub(), list(specs.values()), grants=grants)
        outcomes.update(zip(specs, connected, strict=True))
        return outcomes

    def _sync_tools(self, connected=None):
        """Connect, list the tools and bring the mcp.tool records in line. Never raises for a
        server that fails: it is marked `error` and the result says why. `connected`, this
        server's outcome from _connect_all, stands for connecting here."""
        self.ensure_one()
        try:
            report = self._connect() if connected is None else connected
            if isinstance(report, Exception):
                raise report
        except AiMcpError as exc:
            self._record_error(exc)
            return {"error": self._failure_text(exc), "changed": 0}
        first = not self.last_sync
        counts = self._apply_tools(report.tools, first_sync=first)
        published = self._apply_skills(report.skills)
        self._record_success(report, synced=True)
        summary = _(
            "%(created)s new, %(updated)s updated, %(removed)s no longer offered.",
            created=counts["created"],
            updated=counts["updated"],
            removed=counts["removed"],
        )
        if counts["changed"]:
            summary = f"{summary} " + _(
                "%(changed)s changed or new tools are set aside until reviewed: open them and accept the change.",
                changed=counts["changed"],
            )
        if published:
            summary = f"{summary} {published}"
        if report.warnings:
            summary = f"{summary} {' '.join(report.warnings)}"
        return {"summary": summary, **counts}

    def _apply_tools(self, infos, first_sync=False):
        """Create, update and deactivate this server's mcp.tool records from a listing.

        The admin's choices (enabled, requires approval) are kept. A tool whose description or
        schemas differ from what was approved is set aside (review_state 'changed'); so is a tool
        that appears after the first sync, which nobody reviewed yet."""
        self.ensure_one()
        Tool = self.env["mcp.tool"].with_context(active_test=False)
        existing = {tool.name: tool for tool in Tool.search([("server_id", "=", self.id)])}
        counts = {"created": 0, "updated": 0, "removed": 0, "changed": 0}
        changed_names = []
        to_create = []
        for info in infos:
            values = Tool._values_from_info(info)
            tool = existing.pop(info.name, None)
            if tool is None:
                values.update(
                    name=info.name,
                    server_id=self.id,
                    approved_hash=values["content_hash"] if first_sync else False,
                    requires_approval=Tool._default_requires_approval(info.annotations),
                )
                to_create.append(values)
                counts["created"] += 1
                if not first_sync:
                    changed_names.append(info.name)
                continue
            if not tool.active:
                values["active"] = True
            was_changed = tool.review_state == "changed"
            if not write_changed(tool, values):
                continue
            counts["updated"] += 1
            if tool.review_state == "changed" and not was_changed:
                changed_names.append(info.name)
        if to_create:
            Tool.create(to_create)
        gone = Tool.browse([t.id for t in existing.values() if t.active])
        if gone:
            gone.write({"active": False})
            counts["removed"] = len(gone)
        counts["changed"] = len(changed_names)
        if changed_names:
            self.message_post(
                body=_(
                    "These tools are new or changed their description or schemas since they were approved, and are "
                    "set aside until reviewed: %s",
                    ", ".join(changed_names),
                )
            )
        return counts

    @api.model
    def _cron_sync_all(self):
        """Sync every active server; one that fails is marked `error` and the others go on."""
        servers = self.search([])
        connected = servers._connect_all()
        for done, server in enumerate(servers, start=1):
            if isinstance(connected[server.id], AuthRequired):
                # nobody the cron may act for is signed in: the tools stay as the last sign-in saw them
                _logger.info("MCP sync skipped, no OAuth sign-in: server=%s (id %s)", server.name, server.id)
                continue
            try:
                with self.env.cr.savepoint():
                    result = server._sync_tools(connected[server.id])
                if result.get("error"):
                    _logger.warning("MCP sync failed: server=%s (id %s) %s", server.name, server.id, result["error"])
            except Exception as exc:  # a bug or a database error must not stop the other servers
                _logger.exception("MCP sync crashed: server=%s (id %s)", server.name, server.id)
                server._record_error(AiMcpError(ErrorCode.MCP_PROTOCOL_ERROR, f"Sync failed unexpectedly: {exc}"))
            if not odoo_module.current_test:
                self.env.cr.commit()  # each server's result stands on its own
            cron_progress(self.env, done=done, remaining=len(servers) - done)

    # -- actions ---------------------------------------------------------------------------------

    def action_test_connection(self):
        self.ensure_one()
        try:
            report = self._connect()
        except AiMcpError as exc:
            self._record_error(exc)
            return notification(
                self.env._("Connection to %s failed", self.name), self._failure_text(exc), "danger", sticky=True
            )
        first = not self.last_sync
        if first:
            # the first successful connection discovers the tools, as an admin expects
            self._apply_tools(report.tools, first_sync=True)
            self._apply_skills(report.skills)
        self._record_success(report, synced=first)
        message = self.env._(
            "%(name)s %(version)s, protocol %(protocol)s: %(count)s tools, answered in %(latency)s ms.",
            name=report.server.name,
            version=report.server.version,
            protocol=self.env._("%s (stateless)", report.server.protocol_version)
            if report.server.stateless
            else report.server.protocol_version,
            count=report.total_tools,
            latency=report.latency_ms,
        )
        if first:
            message = f"{message} {self.env._('Tools discovered.')}"
        if report.warnings:
            message = f"{message} {' '.join(report.warnings)}"
        return notification(self.env._("Connected to %s", self.name), message, "success")

    def action_sync_tools(self):
        connected = self._connect_all() if len(self) > 1 else {}
        results = [server._sync_tools(connected.get(server.id)) for server in self]
        failed = [r for r in results if r.get("error")]
        if len(self) == 1:
            result = results[0]
            if failed:
                return notification(self.env._("Sync of %s failed", self.name), result["error"], "danger", sticky=True)
            return notification(
                self.env._("Tools of %s synced", self.name),
                result["summary"],
                "success",
                sticky=bool(result["changed"]),
            )
        message = self.env._(
            "%(ok)s servers synced, %(failed)s failed.", ok=len(results) - len(failed), failed=len(failed)
        )
        return notification(self.env._("Tools synced"), message, "warning" if failed else "success")


def _output(error):
    return error.output if isinstance(error, McpError) else None
