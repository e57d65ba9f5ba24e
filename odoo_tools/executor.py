"""Runs a call of This Odoo's tools for one turn: in the calling thread (a worker thread of the
hub), on a cursor of its own, in an environment of the conversation's user (her uid, the
conversation's company, her language and time zone), never as superuser. A call that reads is
rolled back; one that writes is committed only when it succeeded whole, so a refusal or a failure
changes nothing and the model reads why."""

from __future__ import annotations

import logging
from typing import Any

import psycopg2

from odoo import api
from odoo.exceptions import UserError

from ..services.errors import AiMcpError
from ..services.events import RecordChange
from ..services.loop import LocalTools
from ..services.odoo_catalogue import TOOLS, error_result
from ..services.tool_result import ToolResult
from .toolkit import Refused, Toolkit, TurnReads

_logger = logging.getLogger(__name__)


class OdooTools(LocalTools):
    """This Odoo's tools for one turn: plain data only (no recordset), used from another thread."""

    def __init__(self, registry: Any, uid: int, context: dict[str, Any], assistant_id: int) -> None:
        self._registry = registry
        self._uid = uid
        self._context = dict(context)
        self._assistant_id = assistant_id
        # what the turn's first calls read (the assistant's lines, the fields of each model): reading
        # them again at each call would cost more than many a search
        self._reads = TurnReads()

    def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        spec = TOOLS.get(tool)
        if spec is None:
            return error_result(f"{tool} is not a tool of this Odoo.")
        try:
            with self._registry.cursor() as cr:
                toolkit = self._toolkit(cr, fresh=spec.kind == "write")
                result = toolkit.run(spec, spec.input.model_validate(arguments))
                if spec.kind == "read":
                    cr.rollback()  # a read changes nothing, whatever a compute wrote on the way
                else:
                    toolkit.env.flush_all()
            _logger.info("This Odoo: tool=%s uid=%s ok=%s", tool, self._uid, not result.is_error)
            return result
        except (Refused, UserError) as exc:
            _logger.info("This Odoo refused: tool=%s uid=%s reason=%s", tool, self._uid, _message(exc))
            return error_result(_message(exc))
        except (ValueError, psycopg2.Error) as exc:
            # a domain Odoo cannot read, or a constraint of the database: the model reads it and corrects
            _logger.info("This Odoo call failed: tool=%s uid=%s error=%s", tool, self._uid, exc)
            return error_result(f"Not done, nothing was changed: {exc}")

    def changes(self, tool: str, arguments: dict[str, Any]) -> list[RecordChange]:
        spec = TOOLS.get(tool)
        if spec is None or spec.kind != "write":
            return []
        try:
            with self._registry.cursor() as cr:
                try:
                    return self._toolkit(cr, fresh=True).changes(spec, spec.input.model_validate(arguments))
                finally:
                    cr.rollback()
        except (Refused, UserError, ValueError, AiMcpError, psycopg2.Error) as exc:
            # the call itself will say why when it runs (or is denied): the approval shows its arguments
            _logger.info("This Odoo: no changes to show for tool=%s: %s", tool, exc)
            return []

    def _toolkit(self, cr: Any, fresh: bool) -> Toolkit:
        """`fresh`: a change reads the assistant's lines again, as it may run long after the turn began."""
        # su=False: the call runs with the user's rights, whoever prepared the turn
        env = api.Environment(cr, self._uid, {**self._context, "allowed_company_ids": []}, su=False)
        # the conversation's companies that are still hers (as Odoo checks a request's companies,
        # from its cache that a change of her companies clears); else her own company alone
        mine = env.user._get_company_ids()
        companies = [cid for cid in self._context.get("allowed_company_ids") or () if cid in mine]
        return Toolkit(
            env(context={**env.context, "allowed_company_ids": companies or env.user.company_id.ids}),
            self._assistant_id,
            self._reads,
            fresh,
        )


def _message(exc: Exception) -> str:
    if isinstance(exc, Refused):
        return exc.message
    return str(exc.args[0]) if exc.args else type(exc).__name__
