"""Providers, assistants, MCP servers, cloud services and conversations get a company.

Odoo fills a new column of existing rows with the field's default, which here is the company
worked in: the columns are added empty before Odoo updates the tables, so every record made before
companies were recorded stays shared by every company, as it was. Nothing recorded which company a
conversation was held in, so conversations stay shared too. The companies of tools, presets and
provider models follow their server, assistant and provider: Odoo computes them, empty as theirs.
"""

import logging

from psycopg2 import sql

_logger = logging.getLogger(__name__)

TABLES = ("ai_provider", "ai_assistant", "mcp_server", "cloud_service", "ai_conversation")


def migrate(cr, version):
    for table in TABLES:
        cr.execute(sql.SQL("ALTER TABLE {} ADD COLUMN IF NOT EXISTS company_id integer").format(sql.Identifier(table)))
    _logger.info("ai_mcp: existing %s stay shared by every company (no company)", ", ".join(TABLES))
